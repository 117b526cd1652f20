package testenv

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
)

// AuditEvent is one mutating request from the API server's audit log.
type AuditEvent struct {
	Verb       string `json:"verb"`
	RequestURI string `json:"requestURI"`
	UserAgent  string `json:"userAgent"`
	User       struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// DryRun reports whether the request was a dry run (nothing persisted).
func (e AuditEvent) DryRun() bool { return strings.Contains(e.RequestURI, "dryRun=") }

// AuditMark returns the current end of the audit log; pass it to Writes to
// see only what happened after this point.
func (k *Kube) AuditMark(tb testing.TB) int64 {
	tb.Helper()
	fi, err := os.Stat(k.AuditLogPath())
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		tb.Fatalf("audit log: %v", err)
	}
	return fi.Size()
}

// Writes returns the persisted (not dry-run) mutating requests logged after
// mark for which keep returns true (nil keeps all).
func (k *Kube) Writes(tb testing.TB, mark int64, keep func(AuditEvent) bool) []AuditEvent {
	tb.Helper()
	f, err := os.Open(k.AuditLogPath())
	if err != nil {
		tb.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	if _, err := f.Seek(mark, io.SeekStart); err != nil {
		tb.Fatalf("audit log: %v", err)
	}
	var out []AuditEvent
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e AuditEvent
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			continue // a line being written right now
		}
		if !e.DryRun() && (keep == nil || keep(e)) {
			out = append(out, e)
		}
	}
	return out
}
