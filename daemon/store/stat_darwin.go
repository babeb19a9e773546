package store

import "syscall"

// ctimeNano is a file's status-change time (macOS: st_ctimespec).
func ctimeNano(st *syscall.Stat_t) int64 { return st.Ctimespec.Nano() }
