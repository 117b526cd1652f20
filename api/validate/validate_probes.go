package validate

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/podlayout"
)

// MaxProbeSeconds bounds a probe's delays, period and timeout: a probe
// that waits longer than an hour tells the kubelet nothing it can act on.
const MaxProbeSeconds = 3600

var probeSchemes = []string{string(corev1.URISchemeHTTP), string(corev1.URISchemeHTTPS)}

// validateProbes checks spec.probes: the worker library's probes, or a
// liveness and a readiness probe of the user's, not both; each probe
// with exactly one handler, checked as the API server checks it.
func validateProbes(pr *api.Probes, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	var errs field.ErrorList
	if pr.Worker && (pr.Liveness != nil || pr.Readiness != nil) {
		errs = append(errs, field.Invalid(p.Child("worker"), true,
			"worker probes the worker library's /healthz and /readyz; set it or liveness and readiness, not both"))
	}
	errs = append(errs, validateProbe(pr.Liveness, true, p.Child("liveness"))...)
	return append(errs, validateProbe(pr.Readiness, false, p.Child("readiness"))...)
}

// validateMetricsPort checks spec.metricsPort (0: none): a port a worker
// without privileges may listen on (the restricted pods drop every
// capability, so not below 1024), other than the worker library's health
// port when it serves the probes.
func validateMetricsPort(port int32, pr *api.Probes, fp *field.Path) field.ErrorList {
	switch {
	case port == 0:
		return nil
	case port < 1024 || port > 65535:
		return field.ErrorList{field.Invalid(fp, port, "must be between 1024 and 65535: the worker runs without privileges")}
	case port == podlayout.HealthPort && pr != nil && pr.Worker:
		return field.ErrorList{field.Invalid(fp, port, "is the worker library's health port (spec.probes.worker)")}
	}
	return nil
}

func validateProbe(pr *corev1.Probe, liveness bool, p *field.Path) field.ErrorList {
	if pr == nil {
		return nil
	}
	errs := probeHandler(pr.ProbeHandler, p)
	for _, f := range []struct {
		name string
		v    int32
	}{{"initialDelaySeconds", pr.InitialDelaySeconds}, {"timeoutSeconds", pr.TimeoutSeconds},
		{"periodSeconds", pr.PeriodSeconds}, {"successThreshold", pr.SuccessThreshold}, {"failureThreshold", pr.FailureThreshold}} {
		errs = append(errs, between(p.Child(f.name), int64(f.v), 0, MaxProbeSeconds)...)
	}
	if liveness && pr.SuccessThreshold > 1 {
		errs = append(errs, field.Invalid(p.Child("successThreshold"), pr.SuccessThreshold, "must be 1 for a liveness probe"))
	}
	if g := pr.TerminationGracePeriodSeconds; g != nil {
		if !liveness {
			errs = append(errs, field.Forbidden(p.Child("terminationGracePeriodSeconds"), "may be set only on a liveness probe"))
		} else {
			errs = append(errs, between(p.Child("terminationGracePeriodSeconds"), *g, 1, MaxTerminationGracePeriod)...)
		}
	}
	return errs
}

// probeHandler checks that exactly one of httpGet, tcpSocket, grpc and
// exec is set, and it.
func probeHandler(h corev1.ProbeHandler, p *field.Path) field.ErrorList {
	var set []string
	var errs field.ErrorList
	if g := h.HTTPGet; g != nil {
		set = append(set, "httpGet")
		errs = append(errs, httpGet(g, p.Child("httpGet"))...)
	}
	if t := h.TCPSocket; t != nil {
		set = append(set, "tcpSocket")
		errs = append(errs, probePort(t.Port, p.Child("tcpSocket", "port"))...)
	}
	if g := h.GRPC; g != nil {
		set = append(set, "grpc")
		errs = append(errs, between(p.Child("grpc", "port"), int64(g.Port), 1, 65535)...)
	}
	if e := h.Exec; e != nil {
		set = append(set, "exec")
		if len(e.Command) == 0 {
			errs = append(errs, field.Required(p.Child("exec", "command"), "the command the kubelet runs in the container"))
		}
	}
	switch len(set) {
	case 0:
		return field.ErrorList{field.Required(p, "one of httpGet, tcpSocket, grpc or exec")}
	case 1:
		return errs
	}
	return append(errs, field.Invalid(p, strings.Join(set, " and "), "set one of httpGet, tcpSocket, grpc or exec"))
}

func httpGet(g *corev1.HTTPGetAction, p *field.Path) field.ErrorList {
	errs := probePort(g.Port, p.Child("port"))
	if g.Path != "" && !strings.HasPrefix(g.Path, "/") {
		errs = append(errs, field.Invalid(p.Child("path"), g.Path, "must begin with /"))
	}
	if s := g.Scheme; s != "" && s != corev1.URISchemeHTTP && s != corev1.URISchemeHTTPS {
		errs = append(errs, field.NotSupported(p.Child("scheme"), s, probeSchemes))
	}
	if g.Host != "" {
		// The kubelet would probe another address than the pod's: a
		// probe that passes while the worker is down.
		errs = append(errs, field.Forbidden(p.Child("host"), "the kubelet probes the pod's own address; leave host empty"))
	}
	for i, hd := range g.HTTPHeaders {
		for _, msg := range validation.IsHTTPHeaderName(hd.Name) {
			errs = append(errs, field.Invalid(p.Child("httpHeaders").Index(i).Child("name"), hd.Name, msg))
		}
	}
	return errs
}

// probePort checks a probe's port: a number, since a named port resolves
// against the container's ports and the worker container declares none.
func probePort(port intstr.IntOrString, p *field.Path) field.ErrorList {
	if port.Type == intstr.String {
		return field.ErrorList{field.Invalid(p, port.StrVal,
			"must be a port number: the worker container declares no named ports for it to resolve against")}
	}
	return between(p, int64(port.IntVal), 1, 65535)
}
