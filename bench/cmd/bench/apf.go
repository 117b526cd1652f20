package main

import (
	"bufio"
	"context"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
)

// apfFlow is the flow schema the controllers' ServiceAccount requests
// fall in (priority level workload-low).
const apfFlow = `flow_schema="service-accounts"`

// apfStats is what API Priority and Fairness did with the controllers'
// requests, from the API server's own metrics: dispatched, rejected (429),
// and the time they waited in its queues before they ran.
type apfStats struct {
	Dispatched int           `json:"dispatched"`
	Rejected   int           `json:"rejected"`
	MeanWait   time.Duration `json:"meanWait"`
	// Over20ms is how many waited in a queue longer than 20 ms.
	Over20ms int `json:"over20ms"`
}

// apf reads the API server's flow-control metrics for the controllers'
// flow schema. Each env has its own API server, so they count one run.
func (e *env) apf(ctx context.Context) (apfStats, error) {
	var s apfStats
	cs, err := kubernetes.NewForConfig(e.cp.Config)
	if err != nil {
		return s, err
	}
	body, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return s, err
	}
	var waitSum, waitCount, under20ms float64
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, apfFlow) {
			continue
		}
		series, value, ok := strings.Cut(line, " ")
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !ok || err != nil {
			continue
		}
		name, _, _ := strings.Cut(series, "{")
		switch name {
		case "apiserver_flowcontrol_dispatched_requests_total":
			s.Dispatched += int(v)
		case "apiserver_flowcontrol_rejected_requests_total":
			s.Rejected += int(v)
		case "apiserver_flowcontrol_request_wait_duration_seconds_sum":
			if strings.Contains(series, `execute="true"`) {
				waitSum += v
			}
		case "apiserver_flowcontrol_request_wait_duration_seconds_count":
			if strings.Contains(series, `execute="true"`) {
				waitCount += v
			}
		case "apiserver_flowcontrol_request_wait_duration_seconds_bucket":
			if strings.Contains(series, `execute="true"`) {
				if label(series, "le") == "0.02" {
					under20ms += v
				}
			}
		}
	}
	if waitCount > 0 {
		s.MeanWait = time.Duration(waitSum / waitCount * float64(time.Second))
	}
	s.Over20ms = int(waitCount - under20ms)
	return s, sc.Err()
}

// label returns the value of label name in a Prometheus series.
func label(series, name string) string {
	_, rest, ok := strings.Cut(series, name+`="`)
	if !ok {
		return ""
	}
	v, _, _ := strings.Cut(rest, `"`)
	return v
}
