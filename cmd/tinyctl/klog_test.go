package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"k8s.io/klog/v2"
)

// TestClientGoLinesAreJSONToo: with --log-format json, what client-go
// logs through klog comes out as JSON lines of the process's log.
func TestClientGoLinesAreJSONToo(t *testing.T) {
	var buf bytes.Buffer
	log, err := newLogger(&buf, "info", "json")
	if err != nil {
		t.Fatal(err)
	}
	routeKlog(log)
	t.Cleanup(klog.ClearLogger)
	klog.InfoS("Waited before sending request", "delay", "1.2s")
	klog.ErrorS(errors.New("connection refused"), "Failed to watch", "resource", "deployments")
	klog.Flush()
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want 2 log lines, got %d:\n%s", len(lines), buf.String())
	}
	for _, l := range lines {
		var ev struct {
			Message string         `json:"message"`
			Klog    map[string]any `json:"klog"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil || ev.Message != "client-go" || ev.Klog["msg"] == nil {
			t.Errorf("line %q: not a JSON event with client-go's fields (%v)", l, err)
		}
	}
	if !strings.Contains(lines[1], "connection refused") {
		t.Errorf("the error line lost its error: %s", lines[1])
	}
}
