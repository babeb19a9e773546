//go:build release

// Package release checks what `make release` and the install channels produce (issue 25):
// reproducible archives, their sums and signature, the documented verification (which
// must fail after one changed byte), the Homebrew formula, and `go install …@version`
// against the module offline. `make release-check` runs it (CI once): it builds
// goreleaser's whole matrix twice.
package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/module"
	modzip "golang.org/x/mod/zip"
)

func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

func run(t *testing.T, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func mustRun(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	out, err := run(t, dir, env, name, args...)
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return out
}

// build is one release build: where its clone goes, its Go build cache ("": the shared
// one), its output directory and the umask it runs under.
type build struct {
	src, gocache, dist string
	umask              string
}

// release builds the release of commit in a fresh clone at b.src (so that two builds
// differ in their path, and nothing uncommitted leaks in), into b.dist, signed with key;
// it returns the files a user downloads.
func release(t *testing.T, commit string, b build, key string) map[string][]byte {
	t.Helper()
	env := []string{"DIST=" + b.dist, "HOOKD_SIGNING_KEY=" + key}
	if b.gocache != "" {
		env = append(env, "GOCACHE="+b.gocache)
	}
	umask := func(name string, args ...string) []string {
		return append([]string{"-c", `umask "$0" && exec "$@"`, b.umask, name}, args...)
	}
	mustRun(t, "", nil, "sh", umask("git", "clone", "--quiet", "--no-checkout", repoRoot(), b.src)...)
	mustRun(t, b.src, nil, "sh", umask("git", "checkout", "--quiet", "--detach", commit)...)
	mustRun(t, b.src, env, "sh", umask(filepath.Join(b.src, "packaging", "release.sh"))...)
	files := map[string][]byte{}
	ents, err := os.ReadDir(b.dist)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if n := e.Name(); strings.HasSuffix(n, ".tar.gz") || n == "SHA256SUMS" || n == "SHA256SUMS.sig" {
			b, err := os.ReadFile(filepath.Join(b.dist, n))
			if err != nil {
				t.Fatal(err)
			}
			files[n] = b
		}
	}
	return files
}

func tarEntries(t *testing.T, archive []byte) map[string]*tar.Header {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	m := map[string]*tar.Header{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return m
		}
		if err != nil {
			t.Fatal(err)
		}
		m[h.Name] = h
	}
}

func extract(t *testing.T, archive []byte, name, to string) {
	t.Helper()
	zr, _ := gzip.NewReader(bytes.NewReader(archive))
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			t.Fatalf("%s not in the archive: %v", name, err)
		}
		if h.Name == name {
			b, _ := io.ReadAll(tr)
			if err := os.WriteFile(to, b, 0o755); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
}

// TestReleaseReproducibleSignedVerified: two builds of one commit are byte-identical —
// from two clones in different directories, under different umasks (022 and 077), the
// second by default sharing the first's Go build cache and with HOOKD_RELEASE_COLD=1 from
// an empty one (see below); every archive holds hookd, hookc, LICENSE and README.md owned
// by root and dated by the commit; the binaries say the version and commit; the documented
// verification passes, and fails after one byte of an archive — or of SHA256SUMS — is
// changed.
//
// The shared cache keeps the check cheap enough for CI (the second build compiles nothing
// it can reuse), and still catches what hookd's own build controls: a path in a binary
// (without -trimpath, a package's cache key holds its directory, so the second clone's
// packages are compiled again, with their path), a build id, a VCS stamp, a time, a file
// mode, owner or order in an archive, a signature that is not deterministic. What it
// cannot catch is the Go compiler giving different bytes for identical inputs (the
// toolchain's own reproducibility promise, checked by the Go project); the cold build
// does, at the price of compiling every package for every platform again (about 55 min at
// load 30 on the 2-core development machine, against minutes warm).
func TestReleaseReproducibleSignedVerified(t *testing.T) {
	tmp := t.TempDir()
	key := filepath.Join(tmp, "release-key")
	mustRun(t, tmp, nil, "ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "release@hookd.dev", "-f", key)
	// One commit for both builds, fixed now (the checkout may move while they run), and
	// every property below is of that commit — never of the working tree.
	commit := strings.TrimSpace(mustRun(t, repoRoot(), nil, "git", "rev-parse", "HEAD"))
	second := build{src: filepath.Join(tmp, "src-b", "elsewhere"), dist: filepath.Join(tmp, "b"), umask: "077"}
	if os.Getenv("HOOKD_RELEASE_COLD") == "1" {
		second.gocache = filepath.Join(tmp, "gocache")
		t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", second.gocache).Run() })
		t.Log("HOOKD_RELEASE_COLD=1: the second build starts from an empty Go build cache")
	} else {
		t.Log("the second build shares the first's Go build cache (HOOKD_RELEASE_COLD=1: an empty one)")
	}
	start := time.Now()
	a := release(t, commit, build{src: filepath.Join(tmp, "src-a"), dist: filepath.Join(tmp, "a"), umask: "022"}, key)
	t.Logf("first build: %v", time.Since(start).Round(time.Second))
	start = time.Now()
	b := release(t, commit, second, key)
	t.Logf("second build: %v", time.Since(start).Round(time.Second))

	var names []string
	for n := range a {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if !bytes.Equal(a[n], b[n]) {
			t.Errorf("%s differs between two builds of the same commit", n)
		}
	}
	if len(a) != len(b) {
		t.Errorf("the two builds made different files: %d vs %d", len(a), len(b))
	}
	if t.Failed() {
		t.FailNow()
	}
	t.Logf("%d files byte-identical: %v", len(names), names)
	for _, p := range []string{"linux_amd64", "linux_arm64", "darwin_amd64", "darwin_arm64"} {
		if !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, "_"+p+".tar.gz") }) {
			t.Fatalf("no %s archive in %v", p, names)
		}
	}
	for _, n := range names {
		if !strings.HasSuffix(n, ".tar.gz") {
			continue
		}
		ents := tarEntries(t, a[n])
		var got []string
		for name, h := range ents {
			got = append(got, name)
			if h.Uname != "root" || h.Gname != "root" {
				t.Errorf("%s: %s owned by %s:%s", n, name, h.Uname, h.Gname)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, []string{"LICENSE", "README.md", "hookc", "hookd"}) {
			t.Errorf("%s holds %v", n, got)
		}
		if strings.HasSuffix(n, "_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz") {
			for _, bin := range []string{"hookd", "hookc"} {
				p := filepath.Join(tmp, bin)
				extract(t, a[n], bin, p)
				out := mustRun(t, tmp, nil, p, "--version")
				version := strings.TrimSuffix(strings.TrimPrefix(n, "hookd_"), "_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz")
				if !strings.HasPrefix(out, bin+" "+version+"\n") || !strings.Contains(out, "commit  "+commit) || !strings.Contains(out, "checked against Claude Code") {
					t.Errorf("%s --version from %s:\n%s", bin, n, out)
				}
			}
		}
	}

	// The documented verification, with the key's allowed_signers line.
	pub, _ := os.ReadFile(key + ".pub")
	signers := filepath.Join(tmp, "allowed_signers")
	fields := strings.Fields(string(pub))
	_ = os.WriteFile(signers, []byte(`release@hookd.dev namespaces="hookd-release" `+fields[0]+" "+fields[1]+"\n"), 0o644)
	verify := filepath.Join(repoRoot(), "packaging", "verify.sh")
	if out, err := run(t, tmp, nil, verify, filepath.Join(tmp, "a"), signers); err != nil {
		t.Fatalf("verify.sh on the release: %v\n%s", err, out)
	}
	flip := func(dir, name string) {
		p := filepath.Join(dir, name)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x01
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var archive string
	for _, n := range names {
		if strings.HasSuffix(n, ".tar.gz") {
			archive = n
			break
		}
	}
	flip(filepath.Join(tmp, "b"), archive)
	if out, err := run(t, tmp, nil, verify, filepath.Join(tmp, "b"), signers); err == nil || !strings.Contains(out, "FAILED") {
		t.Fatalf("verify.sh passed with one byte of %s changed:\n%s", archive, out)
	}
	c := filepath.Join(tmp, "c")
	mustRun(t, tmp, nil, "cp", "-r", filepath.Join(tmp, "a"), c)
	flip(c, "SHA256SUMS")
	if out, err := run(t, tmp, nil, verify, c, signers); err == nil {
		t.Fatalf("verify.sh passed with one byte of SHA256SUMS changed:\n%s", out)
	}
	// Another key's signature is refused too.
	if out, err := run(t, tmp, nil, verify, filepath.Join(tmp, "a"), filepath.Join(tmp, "a", "allowed_signers.snapshot")); err == nil {
		t.Fatalf("verify.sh accepted a signature by a key it was not given:\n%s", out)
	}

	// The Homebrew formula names every archive with its sum.
	formula := mustRun(t, tmp, nil, filepath.Join(repoRoot(), "packaging", "homebrew", "formula.sh"), filepath.Join(tmp, "a"))
	for _, line := range strings.Split(strings.TrimSpace(string(a["SHA256SUMS"])), "\n") {
		sum, file, _ := strings.Cut(line, "  ")
		if !strings.Contains(formula, file+"\"\n      sha256 \""+sum+"\"") {
			t.Errorf("the formula lacks %s with sum %s:\n%s", file, sum, formula)
		}
	}
	if ruby, err := exec.LookPath("ruby"); err == nil {
		f := filepath.Join(tmp, "hookd.rb")
		_ = os.WriteFile(f, []byte(formula), 0o644)
		mustRun(t, tmp, nil, ruby, "-c", f)
	} else {
		t.Log("ruby not installed: the formula's Ruby syntax is not checked here")
	}
}

// TestGoInstallFromModule: `go install github.com/hookd/hookd/cmd/...@VERSION` works from
// the module as a proxy would serve it — the committed tree (git archive) zipped by golang.org/x/mod/zip
// into a file:// proxy, dependencies from the local module cache, no network — and the
// installed hookd reports that version.
func TestGoInstallFromModule(t *testing.T) {
	tmp := t.TempDir()
	const mod, version = "github.com/hookd/hookd", "v0.0.1-installcheck"
	dir := filepath.Join(tmp, "proxy", mod, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	zf, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		t.Fatal(err)
	}
	// The committed tree (git archive: no untracked caches, as a tag would be served).
	tree := filepath.Join(tmp, "tree")
	_ = os.MkdirAll(tree, 0o755)
	mustRun(t, repoRoot(), nil, "sh", "-c", "git archive HEAD | tar -x -C "+tree)
	if err := modzip.CreateFromDir(zf, module.Version{Path: mod, Version: version}, tree); err != nil {
		t.Fatal(err)
	}
	zf.Close()
	gomod := mustRun(t, repoRoot(), nil, "git", "show", "HEAD:go.mod")
	info, _ := json.Marshal(map[string]any{"Version": version, "Time": time.Now().UTC().Format(time.RFC3339)})
	_ = os.WriteFile(filepath.Join(dir, version+".mod"), []byte(gomod), 0o644)
	_ = os.WriteFile(filepath.Join(dir, version+".info"), info, 0o644)
	_ = os.WriteFile(filepath.Join(dir, "list"), []byte(version+"\n"), 0o644)
	modcache := strings.TrimSpace(mustRun(t, repoRoot(), nil, "go", "env", "GOMODCACHE"))
	bin := filepath.Join(tmp, "bin")
	env := []string{
		"GOPROXY=file://" + filepath.Join(tmp, "proxy") + ",file://" + filepath.Join(modcache, "cache", "download"),
		// The checksum database is not reachable offline: the dependencies' hashes are
		// checked below against hookd's go.sum instead, from the binary's build record.
		"GOSUMDB=off", "GOTOOLCHAIN=local",
		// -trimpath: the module cache is a fresh directory each run, and without it every
		// package's build-cache key holds its directory, so every dependency would be
		// compiled again each time (8 minutes at load 30). Resolution, the version stamp
		// and the dependency hashes checked here do not depend on it.
		"GOFLAGS=-mod=mod -trimpath",
		"GOPATH=" + filepath.Join(tmp, "gopath"), "GOMODCACHE=" + filepath.Join(tmp, "modcache"), "GOBIN=" + bin,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "install", mod+"/cmd/...@"+version)
	cmd.Dir, cmd.Env = tmp, append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install: %v\n%s", err, out)
	}
	// The module cache is read-only; let t.TempDir remove it.
	t.Cleanup(func() { _ = exec.Command("chmod", "-R", "u+w", filepath.Join(tmp, "modcache")).Run() })
	out := mustRun(t, tmp, nil, filepath.Join(bin, "hookd"), "--version")
	if !strings.HasPrefix(out, "hookd "+version+"\n") {
		t.Fatalf("hookd --version after go install …@%s:\n%s", version, out)
	}
	if out := mustRun(t, tmp, nil, filepath.Join(bin, "hookc"), "--version"); !strings.HasPrefix(out, "hookc dev\n") {
		t.Fatalf("hookc --version: %s", out)
	}
	// Every dependency compiled in is the one go.sum pins, hash for hash.
	gosum := mustRun(t, repoRoot(), nil, "git", "show", "HEAD:go.sum")
	deps := 0
	for _, line := range strings.Split(mustRun(t, tmp, nil, "go", "version", "-m", filepath.Join(bin, "hookd")), "\n") {
		f := strings.Fields(line)
		if len(f) == 4 && f[0] == "dep" {
			deps++
			if !strings.Contains(gosum, f[1]+" "+f[2]+" "+f[3]+"\n") {
				t.Errorf("dependency %s %s %s is not what go.sum pins", f[1], f[2], f[3])
			}
		}
	}
	if deps < 5 {
		t.Fatalf("go version -m listed %d dependencies", deps)
	}
}
