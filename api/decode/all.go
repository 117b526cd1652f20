package decode

import (
	"bytes"
	"io"

	"github.com/tinyctl/tinyctl/api"
)

// Document is one YAML document of a multi-document stream, as All
// returns it.
type Document struct {
	// Index counts the non-empty documents of the stream from 0.
	Index int
	// Line is the 1-based line of the stream where the document's content
	// starts, for error messages.
	Line int
	// Component is the decoded component, valid only when Err is nil.
	Component api.Component
	// Err is the document's *Error, if any.
	Err error
}

// All reads a stream of YAML documents separated by "---" lines (a
// "..." line also ends a document) and decodes each one as Component does.
// Documents holding only blank lines and comments are skipped. A document
// that fails to decode gets its error in Document.Err and does not stop the
// others. The MaxSize cap applies to the whole stream: a larger stream, or a
// read error, fails the call and returns no documents. A stream with no
// documents returns an empty list and no error.
func All(r io.Reader) ([]Document, error) {
	data, err := readCapped(r)
	if err != nil {
		return nil, err
	}
	var docs []Document
	for _, chunk := range splitDocuments(data) {
		c, err := decodeDocument(chunk.data)
		docs = append(docs, Document{Index: len(docs), Line: chunk.line, Component: c, Err: err})
	}
	return docs, nil
}

// chunk is the text of one non-empty document and the line its content
// starts on.
type chunk struct {
	data []byte
	line int
}

// splitDocuments cuts data at YAML document markers and drops documents
// that hold no content.
func splitDocuments(data []byte) []chunk {
	var (
		out     []chunk
		cur     []byte
		first   int // line of the current document's first content line
		lineNum int
	)
	flush := func() {
		if first > 0 {
			out = append(out, chunk{data: cur, line: first})
		}
		cur, first = nil, 0
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line = data[:i+1]
		}
		data = data[len(line):]
		lineNum++
		if rest, ok := cutMarker(line); ok {
			flush()
			line = rest // "--- {inline: document}" keeps its content
		}
		if first == 0 && hasContent(line) {
			first = lineNum
		}
		cur = append(cur, line...)
	}
	flush()
	return out
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

// hasContent reports whether line holds more than whitespace, a comment or a
// YAML directive (such as "%YAML 1.2").
func hasContent(line []byte) bool {
	if len(line) > 0 && line[0] == '%' {
		return false
	}
	t := bytes.TrimSpace(line)
	return len(t) > 0 && t[0] != '#'
}
