package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
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
