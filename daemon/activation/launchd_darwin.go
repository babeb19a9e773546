package activation

import (
	"errors"
	"os"
	"strconv"
	"syscall"
	"unsafe"
)

// launchd hands a job the sockets its plist declares under Sockets through
// launch_activate_socket(3), a libSystem function. hookd is built without cgo, so it calls
// the function the way the Go runtime and golang.org/x/sys/unix call libSystem: through an
// assembly trampoline to the dynamically imported symbol (launchd_darwin.s) and the
// runtime's syscall.syscall, which switches to the system stack.

//go:cgo_import_dynamic libc_launch_activate_socket launch_activate_socket "/usr/lib/libSystem.B.dylib"
//go:cgo_import_dynamic libc_free free "/usr/lib/libSystem.B.dylib"

var (
	libc_launch_activate_socket_trampoline_addr uintptr
	libc_free_trampoline_addr                   uintptr
)

//go:linkname syscall_syscall syscall.syscall
func syscall_syscall(fn, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno)

// SocketNames are the keys of the plist's Sockets dictionary hookd asks for
// (configs/service writes them).
var SocketNames = []string{"Listeners", "HTTP"}

// launchdFiles asks launchd for each named socket set. ESRCH (not a launchd job) and
// ENOENT (no such name in the plist) mean none.
func launchdFiles() ([]*os.File, error) {
	var files []*os.File
	for _, name := range SocketNames {
		fds, err := launchActivateSocket(name)
		if errors.Is(err, syscall.ESRCH) || errors.Is(err, syscall.ENOENT) {
			continue
		}
		if err != nil {
			for _, f := range files {
				f.Close()
			}
			return nil, errors.New("launch_activate_socket(" + strconv.Quote(name) + "): " + err.Error())
		}
		for _, fd := range fds {
			syscall.CloseOnExec(fd)
			files = append(files, os.NewFile(uintptr(fd), name))
		}
	}
	return files, nil
}

func launchActivateSocket(name string) ([]int, error) {
	cname, err := syscall.BytePtrFromString(name)
	if err != nil {
		return nil, err
	}
	var fds *int32
	var cnt uintptr // size_t
	r, _, _ := syscall_syscall(libc_launch_activate_socket_trampoline_addr,
		uintptr(unsafe.Pointer(cname)), uintptr(unsafe.Pointer(&fds)), uintptr(unsafe.Pointer(&cnt)))
	if r != 0 {
		return nil, syscall.Errno(r)
	}
	if fds == nil {
		return nil, nil
	}
	out := make([]int, cnt)
	for i, fd := range unsafe.Slice(fds, cnt) {
		out[i] = int(fd)
	}
	syscall_syscall(libc_free_trampoline_addr, uintptr(unsafe.Pointer(fds)), 0, 0)
	return out, nil
}
