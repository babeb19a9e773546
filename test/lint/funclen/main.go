// Command funclen fails when a function or method in the given package directories is
// longer than -max lines (the body's closing brace minus the func keyword's line, test
// files excluded). make lint runs it on the packages whose functions the project keeps
// short: daemon's engine and server (issue 24: the engine's central function had grown
// to 233 lines).
//
//	go run ./test/lint/funclen -max 80 daemon
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	max := flag.Int("max", 80, "the longest a function may be, in lines")
	flag.Parse()
	bad := 0
	for _, dir := range flag.Args() {
		n, err := check(dir, *max)
		if err != nil {
			fmt.Fprintln(os.Stderr, "funclen:", err)
			os.Exit(2)
		}
		bad += n
	}
	if bad > 0 {
		fmt.Fprintf(os.Stderr, "funclen: %d function(s) longer than %d lines: split them into named steps\n", bad, *max)
		os.Exit(1)
	}
}

// check reports the functions of dir's non-test Go files longer than max lines.
func check(dir string, max int) (int, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return 0, err
	}
	fset := token.NewFileSet()
	bad := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return bad, err
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			start, end := fset.Position(fn.Pos()), fset.Position(fn.Body.Rbrace)
			if lines := end.Line - start.Line; lines > max {
				fmt.Printf("%s:%d: %s is %d lines (> %d)\n", start.Filename, start.Line, fn.Name.Name, lines, max)
				bad++
			}
		}
	}
	return bad, nil
}
