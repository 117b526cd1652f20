package decode

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/tinyctl/tinyctl/api"
)

// Document is one YAML document of a multi-document stream, as Decoder.Next
// and All return it.
type Document struct {
	// Index counts the non-empty documents of the stream from 0.
	Index int
	// Line is the 1-based line of the stream where the document's content
	// starts, for error messages.
	Line int
	// Start is the line where the document's text starts: its "---" or
	// "..." marker, or 1. Line numbers in a YAML syntax error count from it.
	Start int
	// Component is the decoded component, valid only when Err is nil.
	Component api.Component
	// Err is the document's *Error, if any.
	Err error
}

// errDocumentTooLarge is a document of a stream over MaxSize. It matches
// ErrTooLarge with errors.Is.
var errDocumentTooLarge error = documentTooLarge{}

type documentTooLarge struct{}

func (documentTooLarge) Error() string {
	return fmt.Sprintf("document is larger than %d KiB (the limit is per document, not per file)", MaxSize>>10)
}

func (documentTooLarge) Is(target error) bool { return target == ErrTooLarge }

// Decoder reads a stream of YAML documents separated by "---" lines (a
// "..." line also ends a document) one document at a time: it holds at most
// one document (MaxSize) in memory, however long the stream.
type Decoder struct {
	r       *bufio.Reader
	line    int  // lines read so far
	midLine bool // the last read ended inside a line longer than the buffer
	seen    bool // the current line has a non-blank byte
	index   int  // documents returned so far
	err     error
	// pending is a marker's rest ("--- {inline: doc}") read ahead, with the
	// marker's line.
	pending     []byte
	pendingLine int
}

// NewDecoder returns a Decoder reading r.
func NewDecoder(r io.Reader) *Decoder {
	return &Decoder{r: bufio.NewReaderSize(r, 64<<10), pendingLine: 1}
}

// Next returns the next non-empty document, decoded as Component does:
// a document that fails to decode, or is larger than MaxSize (ErrTooLarge),
// has its *Error in Document.Err and the stream goes on. Documents holding
// only blank lines and comments are skipped. At the end of the stream Next
// returns io.EOF; a read error is returned wrapped, and again on later
// calls.
func (d *Decoder) Next() (Document, error) {
	for d.err == nil {
		doc, ok := d.readDocument()
		if !ok {
			continue
		}
		doc.Index = d.index
		d.index++
		return doc, nil
	}
	return Document{}, d.err
}

// readDocument reads up to the next marker or the end of the stream and
// decodes what it read; ok is false for a document with no content.
func (d *Decoder) readDocument() (doc Document, ok bool) {
	doc.Start = d.pendingLine
	var (
		buf      []byte
		size     int
		tooLarge bool
	)
	add := func(b []byte, start bool) {
		if d.content(b, start) && doc.Line == 0 {
			doc.Line = d.line
		}
		size += len(b)
		if tooLarge = tooLarge || size > MaxSize; tooLarge {
			buf = nil // read on to the next marker, holding nothing
			return
		}
		buf = append(buf, b...)
	}
	if d.pending != nil {
		add(d.pending, false)
		d.pending = nil
	}
	for {
		line, start, err := d.readLine()
		if rest, marker := cutMarker(line); marker && start {
			d.seen = false
			d.pending, d.pendingLine = bytes.Clone(rest), d.line
			break
		}
		add(line, start)
		if err != nil {
			d.err = err
			break
		}
	}
	switch {
	case doc.Line == 0:
		return doc, false
	case tooLarge:
		doc.Err = &Error{Errs: []error{errDocumentTooLarge}}
	default:
		doc.Component, doc.Err = decodeDocument(buf)
	}
	return doc, true
}

// content reports whether piece, the start of a line or a later piece of
// it, makes its line hold more than whitespace, a comment or a YAML
// directive (such as "%YAML 1.2").
func (d *Decoder) content(piece []byte, start bool) bool {
	if start {
		d.seen = false
		if len(piece) > 0 && piece[0] == '%' {
			d.seen = true // a directive
			return false
		}
	}
	if d.seen {
		return false
	}
	t := bytes.TrimLeft(piece, " \t\r\n")
	if len(t) == 0 {
		return false
	}
	d.seen = true
	return t[0] != '#'
}

// readLine returns the next line, or the next piece of a line longer than
// the buffer; start says whether it begins a line. Its error is io.EOF at
// the end of the stream or the read error, wrapped.
func (d *Decoder) readLine() (line []byte, start bool, err error) {
	start = !d.midLine
	line, err = d.r.ReadSlice('\n')
	d.midLine = errors.Is(err, bufio.ErrBufferFull)
	if d.midLine {
		err = nil
	}
	if start && len(line) > 0 {
		d.line++
	}
	switch {
	case err == nil, err == io.EOF:
	default:
		err = fmt.Errorf("read components: %w", err)
	}
	return line, start, err
}

// All reads a stream as Decoder does and returns every non-empty document.
// A document that fails to decode, or is larger than MaxSize, gets its
// error in Document.Err and does not stop the others; no cap applies to the
// stream as a whole. A read error fails the call and returns no documents.
// A stream with no documents returns an empty list and no error.
func All(r io.Reader) ([]Document, error) {
	dec := NewDecoder(r)
	var docs []Document
	for {
		doc, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
}

// cutMarker reports whether line is a document marker ("---" or "..." at
// column 0, alone or followed by whitespace) and returns what follows it.
func cutMarker(line []byte) ([]byte, bool) {
	for _, m := range [][]byte{[]byte("---"), []byte("...")} {
		rest, ok := bytes.CutPrefix(line, m)
		if !ok {
			continue
		}
		if len(rest) == 0 || rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\n' || rest[0] == '\r' {
			return rest, true
		}
	}
	return nil, false
}
