package main

import (
	"github.com/go-logr/logr/funcr"
	"github.com/rs/zerolog"
	"k8s.io/klog/v2"
)

// routeKlog sends client-go's own log lines (klog: reflector and watch
// errors, client-side throttling, leader-election notes) through log, each
// one event with the line's fields under "klog", so that --log-format
// json stays one JSON object per line.
func routeKlog(log zerolog.Logger) {
	klog.SetLogger(funcr.NewJSON(func(obj string) {
		log.Info().RawJSON("klog", []byte(obj)).Msg("client-go")
	}, funcr.Options{}))
}
