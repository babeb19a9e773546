package store

import "syscall"

// ctimeNano is a file's status-change time (Linux: st_ctim).
func ctimeNano(st *syscall.Stat_t) int64 { return st.Ctim.Nano() }
