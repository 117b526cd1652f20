package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestExitCodesAndMessages(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		wantCode int
		wantOut  string
		wantErr  string
	}{
		{"version", []string{"version"}, exitOK, "tinyctl dev (go", ""},
		{"unknown command", []string{"frobnicate"}, exitUsage, "", `Error: unknown command "frobnicate" for "tinyctl"`},
		{"unknown flag", []string{"version", "--bogus"}, exitUsage, "", "Error: unknown flag: --bogus"},
		{"extra argument", []string{"version", "now"}, exitUsage, "", "Run 'tinyctl version --help' for usage."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tt.args, &out, &errOut)
			if code != tt.wantCode {
				t.Errorf("exit code = %d, want %d (stderr %q)", code, tt.wantCode, errOut.String())
			}
			if !strings.Contains(out.String(), tt.wantOut) {
				t.Errorf("stdout = %q, want it to contain %q", out.String(), tt.wantOut)
			}
			if !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("stderr = %q, want it to contain %q", errOut.String(), tt.wantErr)
			}
		})
	}
}
