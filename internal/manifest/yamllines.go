package manifest

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
)

// yamlLine finds the line numbers the YAML parser puts in its messages
// ("yaml: line 3: ..."). They count from the start of the document, not of
// the file.
var yamlLine = regexp.MustCompile(`\bline (\d+)\b`)

// fileLines rewrites the document-relative line numbers of a YAML parser
// message into lines of the file, given the file line where the document's
// text starts, and puts a multi-line message on one line.
func fileLines(msg string, start int) string {
	msg = yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "line "))
		if err != nil {
			return m
		}
		return "line " + strconv.Itoa(start+n-1)
	})
	return strings.Join(strings.Fields(msg), " ")
}

// documentStart returns the file line where the text of the document whose
// content starts at contentLine begins: the "---" or "..." line before it
// (or the content line itself when it follows a marker on the same line),
// else line 1.
func documentStart(data []byte, contentLine int) int {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for n := min(contentLine, len(lines)); n >= 1; n-- {
		if isMarker(lines[n-1]) {
			return n
		}
	}
	return 1
}

// isMarker reports whether line is a document marker at column 0.
func isMarker(line []byte) bool {
	for _, m := range []string{"---", "..."} {
		rest, ok := bytes.CutPrefix(line, []byte(m))
		if ok && (len(rest) == 0 || strings.ContainsRune(" \t\r\n", rune(rest[0]))) {
			return true
		}
	}
	return false
}
