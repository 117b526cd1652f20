package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's CPU times: 100 on
// every Linux architecture Go runs on.
const clockTicks = 100

// usage is a process's CPU time and memory as /proc reports them.
type usage struct {
	CPU     time.Duration // user + system
	RSS     int64         // VmRSS, bytes
	PeakRSS int64         // VmHWM, bytes
}

// procStat is what /proc/<pid>/stat says of a process: its command
// name, its parent and its CPU time (utime + stime).
type procStat struct {
	comm string
	ppid int
	cpu  time.Duration
}

func readStat(pid int) (procStat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	// The command name (field 2, in parentheses) may hold spaces; fields
	// count from the closing parenthesis: state is field 3, ppid 4, utime
	// 14, stime 15.
	s := string(data)
	open, shut := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || shut < open {
		return procStat{}, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[shut+1:])
	if len(f) < 13 {
		return procStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	ppid, err0 := strconv.Atoi(f[1])
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err0 != nil || err1 != nil || err2 != nil {
		return procStat{}, fmt.Errorf("/proc/%d/stat: ppid %q utime %q stime %q", pid, f[1], f[11], f[12])
	}
	return procStat{comm: s[open+1 : shut], ppid: ppid, cpu: time.Duration(utime+stime) * time.Second / clockTicks}, nil
}

// readUsage reads /proc/<pid>/stat (utime, stime) and /proc/<pid>/status
// (VmRSS, VmHWM).
func readUsage(pid int) (usage, error) {
	var u usage
	st, err := readStat(pid)
	if err != nil {
		return u, err
	}
	u.CPU = st.cpu
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		key, val, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(val), " kB"), 10, 64)
		switch key {
		case "VmRSS":
			u.RSS = kb << 10
		case "VmHWM":
			u.PeakRSS = kb << 10
		}
	}
	return u, nil
}

// usage reads the serve process's usage.
func (p *proc) usage() (usage, error) { return readUsage(p.cmd.Process.Pid) }

// machineTimes is the whole machine's CPU time from /proc/stat's first
// line, in clock ticks: busy (user, nice, system, irq, softirq, steal)
// and all (busy plus idle and iowait).
type machineTimes struct {
	busy, all int64
	parts     partsCPU
}

// partsCPU is the CPU time of the parts around the controller: the
// driver (this process, with the embedded nats-server), the API server
// and etcd.
type partsCPU struct {
	Driver    time.Duration `json:"driver"`
	APIServer time.Duration `json:"apiServer"`
	Etcd      time.Duration `json:"etcd"`
}

// readParts reads the CPU time of this process and of its children named
// kube-apiserver and etcd.
func readParts() partsCPU {
	var p partsCPU
	self := os.Getpid()
	if st, err := readStat(self); err == nil {
		p.Driver = st.cpu
	}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		st, err := readStat(pid)
		if err != nil || st.ppid != self {
			continue
		}
		switch st.comm {
		case "kube-apiserver":
			p.APIServer += st.cpu
		case "etcd":
			p.Etcd += st.cpu
		}
	}
	return p
}

func (p partsCPU) minus(q partsCPU) partsCPU {
	return partsCPU{Driver: p.Driver - q.Driver, APIServer: p.APIServer - q.APIServer, Etcd: p.Etcd - q.Etcd}
}

// readMachine reads /proc/stat; a zero machineTimes when it cannot.
func readMachine() machineTimes {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineTimes{}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return machineTimes{}
	}
	t := machineTimes{parts: readParts()}
	for i, s := range f[1:9] { // user nice system idle iowait irq softirq steal
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return machineTimes{}
		}
		t.all += v
		if i != 3 && i != 4 {
			t.busy += v
		}
	}
	return t
}

// busySince is the share of the machine's CPU time (all cores) that was
// busy since start, 0 to 1 (0 when either reading failed), and the CPU
// time the parts used since.
func busySince(start machineTimes) (float64, partsCPU) {
	now := readMachine()
	if start.all == 0 || now.all <= start.all {
		return 0, partsCPU{}
	}
	return float64(now.busy-start.busy) / float64(now.all-start.all), now.parts.minus(start.parts)
}

func (p partsCPU) String() string {
	return fmt.Sprintf("CPU: API server %.1f s, etcd %.1f s, driver and NATS %.1f s",
		p.APIServer.Seconds(), p.Etcd.Seconds(), p.Driver.Seconds())
}
