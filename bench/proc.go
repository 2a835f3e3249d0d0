package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// procKiB reads a "Name:  123 kB" field of /proc/<pid>/status (or /proc/meminfo when pid is 0).
func procKiB(pid int, field string) uint64 {
	path := "/proc/meminfo"
	if pid != 0 {
		path = fmt.Sprintf("/proc/%d/status", pid)
	}
	file, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer func() { _ = file.Close() }()
	s := bufio.NewScanner(file)
	for s.Scan() {
		line := s.Text()
		if strings.HasPrefix(line, field+":") {
			parts := strings.Fields(line)
			if len(parts) >= 2 {
				v, _ := strconv.ParseUint(parts[1], 10, 64)
				return v
			}
		}
	}
	return 0
}

func memTotal() uint64 { return procKiB(0, "MemTotal") * 1024 }

func rssBytes(pid int) uint64 { return procKiB(pid, "VmRSS") * 1024 }

// clockTicks is the kernel's USER_HZ, the unit of /proc CPU times (100 on Linux everywhere).
const clockTicks = 100

// machineBusy returns the CPU seconds all cores have spent busy (not idle or waiting on I/O)
// since boot, from /proc/stat.
func machineBusy() float64 {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	fields := strings.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	var busy uint64
	for i, v := range fields[1:] {
		n, _ := strconv.ParseUint(v, 10, 64)
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return float64(busy) / clockTicks
}

// processCPU returns the CPU seconds a process has used (user and system), from /proc/<pid>/stat.
func processCPU(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name may hold spaces; the fields after it are fixed.
	_, rest, _ := strings.Cut(string(raw), ") ")
	fields := strings.Fields(rest)
	if len(fields) < 13 {
		return 0
	}
	user, _ := strconv.ParseUint(fields[11], 10, 64)
	sys, _ := strconv.ParseUint(fields[12], 10, 64)
	return float64(user+sys) / clockTicks
}

// cpuMeter measures, over a stretch of time, how busy the machine was and the CPU seconds each
// group of processes took: what tells a run limited by the machine from one limited by
// Flotilla, and where the machine's time went.
type cpuMeter struct {
	groups  []cpuGroup
	start   time.Time
	machine float64
	used    []float64
}

type cpuGroup struct {
	name string
	pids []int
}

func startCPUMeter(groups []cpuGroup) cpuMeter {
	m := cpuMeter{groups: groups, start: time.Now(), machine: machineBusy()}
	for _, g := range groups {
		m.used = append(m.used, g.cpu())
	}
	return m
}

func (g cpuGroup) cpu() float64 {
	var s float64
	for _, pid := range g.pids {
		s += processCPU(pid)
	}
	return s
}

// String reports the machine's busy share of all cores and each group's CPU seconds.
func (m cpuMeter) String() string {
	wall := time.Since(m.start).Seconds()
	busy := (machineBusy() - m.machine) / (wall * float64(runtime.NumCPU())) * 100
	parts := []string{fmt.Sprintf("machine %.0f%% busy", busy)}
	for i, g := range m.groups {
		parts = append(parts, fmt.Sprintf("%s %.1f", g.name, g.cpu()-m.used[i]))
	}
	return parts[0] + ", CPU-s: " + strings.Join(parts[1:], ", ")
}
