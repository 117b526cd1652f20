package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// injected are the answers FaultyAPI gives instead of the API server's, in
// turn: throttled, a server error, a conflict (none passed on), and a
// gateway timeout for a write that was passed on and committed.
var injected = []int{http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusConflict, http.StatusGatewayTimeout}

// committed is the injected code of a write the API server carried out
// before the proxy answered with it: the writer cannot tell that it
// landed.
const committed = http.StatusGatewayTimeout

// FaultyAPI is a plain-HTTP reverse proxy in front of a kube-apiserver
// that answers a share of the writes (POST, PUT, PATCH, DELETE) itself
// with 429, 500 or 409, without passing them on, or passes the write on
// and, once the API server has carried it out, answers 504 instead of its
// answer. Reads and watches always pass.
type FaultyAPI struct {
	srv *httptest.Server

	mu     sync.Mutex
	holds  []*HeldWrite // waiting for their write
	every  []*HeldWrite
	rate   float64
	rng    *rand.Rand
	writes int
	failed map[int]int
}

// StartFaultyAPI proxies to the API server cfg reaches with cfg's
// credentials (every client of the proxy acts as cfg's user; its user
// agent is passed on). It stops when the test ends.
func StartFaultyAPI(tb testing.TB, cfg *rest.Config, rate float64, seed uint64) *FaultyAPI {
	tb.Helper()
	target, err := url.Parse(cfg.Host)
	testenv.Must(tb, err)
	tr, err := rest.TransportFor(cfg) // adds cfg's token: clients do not send theirs over plain HTTP
	testenv.Must(tb, err)
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.Transport = tr
	rp.FlushInterval = -1 // watches stream
	f := &FaultyAPI{rate: rate, rng: rand.New(rand.NewPCG(seed, seed+1)), failed: map[int]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := f.held(r); h != nil {
			h.serve(w, r, rp)
			return
		}
		code := f.fault(r)
		if code == committed {
			rp.ServeHTTP(httptest.NewRecorder(), r) // carried out, its answer dropped
		}
		if code != 0 {
			writeStatus(w, code)
			return
		}
		rp.ServeHTTP(w, r)
	}))
	tb.Cleanup(func() {
		f.mu.Lock()
		for _, h := range f.every {
			h.release() // a handler still holding a write would keep Close waiting
		}
		f.mu.Unlock()
		f.srv.Close()
	})
	return f
}

// fault decides whether to fail r and with which code (0: pass it on).
func (f *FaultyAPI) fault(r *http.Request) int {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return 0
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if f.rng.Float64() >= f.rate {
		return 0
	}
	code := injected[f.rng.IntN(len(injected))]
	f.failed[code]++
	return code
}

// writeStatus answers with a metav1.Status, as the API server does, so
// clients classify the error by its code and reason.
func writeStatus(w http.ResponseWriter, code int) {
	reason := map[int]metav1.StatusReason{
		http.StatusTooManyRequests:     metav1.StatusReasonTooManyRequests,
		http.StatusInternalServerError: metav1.StatusReasonInternalError,
		http.StatusConflict:            metav1.StatusReasonConflict,
		http.StatusGatewayTimeout:      metav1.StatusReasonTimeout,
	}[code]
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure,
		Code: int32(code), Reason: reason, Message: "injected by the chaos proxy"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(st)
}

// SetRate changes the share of writes failed (0 to 1).
func (f *FaultyAPI) SetRate(rate float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rate = rate
}

// Injected returns how many writes passed through and how many were
// failed, by status code (504: carried out, then failed).
func (f *FaultyAPI) Injected() (writes int, failed map[int]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[int]int{}
	for k, v := range f.failed {
		out[k] = v
	}
	return f.writes, out
}

// Kubeconfig writes a kubeconfig that reaches the API server through the
// proxy, and returns its path.
func (f *FaultyAPI) Kubeconfig(tb testing.TB) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "kubeconfig")
	kc := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"faulty": {Server: f.srv.URL}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {}},
		Contexts:       map[string]*clientcmdapi.Context{"faulty": {Cluster: "faulty", AuthInfo: "admin"}},
		CurrentContext: "faulty",
	}
	testenv.Must(tb, clientcmd.WriteToFile(kc, path))
	return path
}

// HeldWrite is a write the proxy holds, as the network might delay it:
// its client waits (and may give up), and when released it is sent on
// regardless, as bytes already on their way would be.
type HeldWrite struct {
	match    func(*http.Request) bool
	once     sync.Once
	caught   chan struct{}
	released chan struct{}
	answered chan struct{}
	body     []byte
	code     int
	answer   string
}

// Hold holds the next write (POST, PUT, PATCH, DELETE) match accepts
// until Release; the writes before and after it pass as usual.
func (f *FaultyAPI) Hold(match func(*http.Request) bool) *HeldWrite {
	h := &HeldWrite{match: match, caught: make(chan struct{}), released: make(chan struct{}), answered: make(chan struct{})}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.holds, f.every = append(f.holds, h), append(f.every, h)
	return h
}

// held returns the hold r falls under, taking it, or nil.
func (f *FaultyAPI) held(r *http.Request) *HeldWrite {
	switch r.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete:
	default:
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, h := range f.holds {
		if h.match(r) {
			f.holds = append(f.holds[:i], f.holds[i+1:]...)
			return h
		}
	}
	return nil
}

// serve holds r until Release, then sends it on, detached from its
// client, and answers the client (if it still listens) with the answer.
func (h *HeldWrite) serve(w http.ResponseWriter, r *http.Request, rp *httputil.ReverseProxy) {
	body, _ := io.ReadAll(r.Body)
	h.body = body
	close(h.caught)
	<-h.released
	out := r.Clone(context.WithoutCancel(r.Context()))
	out.Body = io.NopCloser(bytes.NewReader(body))
	rec := httptest.NewRecorder()
	rp.ServeHTTP(rec, out)
	h.code, h.answer = rec.Code, rec.Body.String()
	close(h.answered)
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// Caught is closed once a write is held.
func (h *HeldWrite) Caught() <-chan struct{} { return h.caught }

// Body is the held write's request body (once Caught).
func (h *HeldWrite) Body() []byte { return h.body }

// Release sends the held write on and returns the API server's answer:
// its status code and body.
func (h *HeldWrite) Release(ctx context.Context) (int, string, error) {
	h.release()
	select {
	case <-h.answered:
		return h.code, h.answer, nil
	case <-ctx.Done():
		return 0, "", ctx.Err()
	}
}

func (h *HeldWrite) release() { h.once.Do(func() { close(h.released) }) }
