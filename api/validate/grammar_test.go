package validate

import (
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/workerenv"
)

func TestImageReferences(t *testing.T) {
	digest := "sha256:" + strings.Repeat("ab", 32)
	valid := []string{
		"nginx:1.27", "library/nginx:1.27", "docker.io/library/nginx:1.27-alpine",
		"registry.example.com:5000/team/app:v1", "localhost:5000/app:dev", "[::1]:5000/app:1",
		"ghcr.io/a/b/c/d:1", "app@" + digest, "app:1.0@" + digest, "my_org/my__app-x.y:TAG_1",
		"app:latest",
	}
	for _, ref := range valid {
		if errs := validateImage(nil, ref); len(errs) > 0 {
			t.Errorf("%q rejected: %v", ref, errs.ToAggregate())
		}
	}
	invalid := []string{
		"nginx", "registry.example.com/team/app", "Team/App:1", "app:", "app:-x",
		"app:" + strings.Repeat("a", 129), "app@sha256:XYZ", "app@md5:" + strings.Repeat("a", 32),
		"app:1 ", " app:1", "-app:1", "app//x:1", "https://registry/app:1", "app:1@",
	}
	for _, ref := range invalid {
		if errs := validateImage(nil, ref); len(errs) == 0 {
			t.Errorf("%q accepted", ref)
		}
	}
}

func TestSubjects(t *testing.T) {
	valid := []string{"jobs", "jobs.x", "jobs.*", "jobs.>", "jobs.*.png", "a.b.c.d.e.>", "tenant-1.jobs", "jobs.$x"}
	for _, s := range valid {
		if p := subjectProblem(s); p != "" {
			t.Errorf("%q rejected: %s", s, p)
		}
	}
	invalid := []string{">", "*", "*.>", "*.jobs", "$JS.API.>", "$SYS.x", "$kv.bucket.k", "_INBOX.x", "_inbox.x", "tinyctl.dlq.dead.x",
		".jobs", "jobs.", "jobs..x", "jobs.x*", "jobs.>x", "jobs.>.x", "jobs x", "jobs\tx", "jobs.\u00a0"}
	for _, s := range invalid {
		if p := subjectProblem(s); p == "" {
			t.Errorf("%q accepted", s)
		}
	}
}

func TestSubjectsCollide(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"jobs.a", "jobs.a", true},
		{"jobs.a", "jobs.b", false},
		{"jobs.>", "jobs.a.b", true},
		{"jobs.>", "jobs", false}, // '>' needs at least one more token
		{"jobs.*", "jobs.a", true},
		{"jobs.*", "jobs.a.b", false},
		{"jobs.*.c", "jobs.b.*", true},
		{"jobs.*.c", "jobs.b.d", false},
		{"jobs.a.>", "jobs.*.b", true},
		{"jobs.a", "other.a", false},
	}
	for _, tt := range tests {
		if got := subjectsCollide(tt.a, tt.b); got != tt.want {
			t.Errorf("subjectsCollide(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
		if got := subjectsCollide(tt.b, tt.a); got != tt.want {
			t.Errorf("subjectsCollide(%q, %q) = %v, want %v", tt.b, tt.a, got, tt.want)
		}
	}
}

func TestWarnings(t *testing.T) {
	c := validComponent()
	if w := Warnings(c); len(w) > 0 {
		t.Errorf("unexpected warnings: %q", w)
	}
	c.Spec.Image = "acme/extractor:latest"
	c.Spec.Jobs.Consumer.Backoff[0] = "5s"
	c.Spec.Egress.Allow[0].CIDR, c.Spec.Egress.Allow[0].Except = "0.0.0.0/0", nil
	c.Spec.AutomountServiceAccountToken = true // the default account's token
	got := Warnings(c)
	wantPrefixes := []string{"spec.image: ", "spec.jobs.consumer.backoff[0]: ", "spec.egress.allow[0].cidr: ", "spec.automountServiceAccountToken: "}
	if len(got) != len(wantPrefixes) {
		t.Fatalf("warnings %q, want %d", got, len(wantPrefixes))
	}
	for i, p := range wantPrefixes {
		if !strings.HasPrefix(got[i], p) {
			t.Errorf("warning %q does not start with %q", got[i], p)
		}
	}
	if errs := Component(c); len(errs) > 0 {
		t.Errorf("warnings must not be errors: %v", errs.ToAggregate())
	}
}

func TestReservedEnv(t *testing.T) {
	for _, name := range []string{workerenv.NATSURL, workerenv.NATSCreds, workerenv.Stream, workerenv.Consumer, "TINYCTL_ANYTHING"} {
		if !workerenv.Reserved(name) {
			t.Errorf("workerenv.Reserved(%q) = false", name)
		}
	}
	for _, name := range []string{"NATS_URL_FALLBACK", "LOG_LEVEL", "tinyctl_x"} {
		if workerenv.Reserved(name) {
			t.Errorf("workerenv.Reserved(%q) = true", name)
		}
	}
}

func TestKeys(t *testing.T) {
	ns, name, err := api.ParseKey("workers.pdf-extractor")
	if err != nil || ns != "workers" || name != "pdf-extractor" {
		t.Errorf("ParseKey = %q, %q, %v", ns, name, err)
	}
	for _, bad := range []string{"", "workers", "workers.", ".x", "a.b.c", "Workers.x", "w." + strings.Repeat("a", 53)} {
		if _, _, err := api.ParseKey(bad); err == nil {
			t.Errorf("ParseKey(%q) succeeded", bad)
		}
	}
	c := validComponent()
	if err := api.CheckKey("workers.extractor", c); err != nil {
		t.Error(err)
	}
	if err := api.CheckKey("workers.other", c); !isInvalid(err) {
		t.Errorf("CheckKey(mismatch) = %v, want api.ErrInvalid", err)
	}
}
