package serve

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestProfilesAreServedOnlyWhenAsked: no profiling listener by default;
// with an address, the heap profile answers.
func TestProfilesAreServedOnlyWhenAsked(t *testing.T) {
	for _, off := range []string{"", disabled} {
		ls, err := listen(disabled, disabled, off)
		if err != nil || ls.pprof != nil {
			t.Fatalf("pprof address %q: listener %v, err %v; want none", off, ls.pprof, err)
		}
	}
	ls, err := listen(disabled, disabled, "127.0.0.1:0")
	if err != nil || ls.pprof == nil {
		t.Fatalf("pprof on 127.0.0.1:0: listener %v, err %v", ls.pprof, err)
	}
	ls.close()

	srv := httptest.NewServer(profiling())
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/debug/pprof/heap?debug=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "heap profile") {
		t.Fatalf("GET /debug/pprof/heap = %d %.80q", resp.StatusCode, body)
	}
}
