package manifest

import (
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
