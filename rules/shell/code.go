package shell

import (
	"github.com/hookd/hookd/rules/shell/bash"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

// This file checks the places where bash evaluates text as code although
// nothing in the command looks like a command: arithmetic (`$(( ))`,
// `(( ))`, `let`, `for (( ))`, array subscripts, `${x:i:n}`, the
// arithmetic comparisons of `[[ ]]`, assignments to `declare -i`
// variables), names with subscripts given to builtins (`read`, `printf -v`,
// `unset`, `test -v`, `[[ -v ]]`, `declare`, namerefs), indirection
// (`${!x}`) and prompt expansion (`${x@P}`). In arithmetic, bash reads a
// variable's value as an expression in turn, and the subscript of an array
// in it is expanded — `x='a[$(rm -rf ~)]'; echo $((x))` runs rm. A context
// is understood when every operand is a number, a value the analysis knows
// (checked the same way, to a depth), a value from the harness's environment
// (data the command did not write) or one the script only ever sets to
// integers. Anything else — a command's output, a value read or built at
// run time — is reported, and the analysis fails closed on it.

// maxCodeDepth bounds how many variable values deep a check follows.
const maxCodeDepth = 8

// arith returns why bash may run code the analysis cannot see while
// evaluating x, or "".
func (w *walker) arith(x syntax.ArithmExpr, depth int) string {
	if x == nil {
		return ""
	}
	if depth > maxCodeDepth {
		return "arithmetic nests variable values too deeply"
	}
	switch x := x.(type) {
	case *syntax.BinaryArithm:
		if why := w.arith(x.X, depth); why != "" {
			return why
		}
		return w.arith(x.Y, depth)
	case *syntax.UnaryArithm:
		return w.arith(x.X, depth)
	case *syntax.ParenArithm:
		return w.arith(x.X, depth)
	case *syntax.Word:
		return w.operand(x, depth)
	}
	return "arithmetic holds a form hookd does not model"
}

// operand checks one word of an arithmetic expression: bash expands it
// and evaluates the resulting text.
func (w *walker) operand(wd *syntax.Word, depth int) string {
	if len(wd.Parts) == 1 {
		switch p := wd.Parts[0].(type) {
		case *syntax.Lit:
			v := w.ev.lit(p.Value)
			if bash.IsArithNumber(v) {
				return ""
			}
			if bash.IsName(v) {
				return w.varCode(v, depth)
			}
			return w.arithText(v, depth)
		case *syntax.ParamExp:
			return w.paramCode(p, depth)
		}
	}
	// Several parts, quotes, substitutions: bash evaluates the text they
	// make. Known text is checked; text from the environment is data.
	text, known := "", true
	for _, p := range wd.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			text += w.ev.lit(p.Value)
		case *syntax.SglQuoted:
			if p.Dollar {
				return "arithmetic evaluates `" + w.ev.srcOf(wd) + "`"
			}
			text += w.ev.lit(p.Value)
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				switch q := q.(type) {
				case *syntax.Lit:
					text += w.ev.lit(q.Value)
				case *syntax.ParamExp:
					if why := w.paramData(q); why != "" {
						return why
					}
					known = false
				default:
					return "arithmetic evaluates the output of `" + w.ev.srcOf(q) + "` as code"
				}
			}
		case *syntax.ParamExp:
			if why := w.paramData(p); why != "" {
				return why
			}
			known = false
		case *syntax.ArithmExp:
			// An integer, once its own expression is understood: text
			// from a string is not walked as commands, so a substitution
			// inside (`'$(( $(rm x) ))'`) is seen only here.
			if why := w.arith(p.X, depth); why != "" {
				return why
			}
			known = false
		default:
			return "arithmetic evaluates the output of `" + w.ev.srcOf(p) + "` as code"
		}
	}
	if !known {
		return ""
	}
	return w.arithText(text, depth)
}

// paramData checks a parameter expansion whose text becomes part of an
// expression: a plain variable from the environment or an integer is data;
// one the command set at run time is not.
func (w *walker) paramData(p *syntax.ParamExp) string {
	if p.Length {
		return ""
	}
	if p.Param == nil || !plainParam(p) {
		return "arithmetic evaluates the result of `" + w.ev.srcOf(p) + "` as code"
	}
	name := p.Param.Value
	if vals, ok := w.ev.param(p); ok {
		for _, v := range vals {
			if why := w.arithText(v, 1); why != "" {
				return why
			}
		}
		return ""
	}
	if w.varKind(name) == kindRun {
		return "arithmetic evaluates `" + name + "`, a value the command sets at run time, as code"
	}
	return ""
}

// paramCode checks $x, ${x}, a[i], ${#x}, ${x:-0} as an arithmetic operand.
func (w *walker) paramCode(p *syntax.ParamExp, depth int) string {
	if p.Param == nil {
		return "arithmetic holds a form hookd does not model"
	}
	if p.Length {
		return w.arith(indexExpr(p.Index), depth)
	}
	if p.Index != nil {
		if why := w.arith(indexExpr(p.Index), depth); why != "" {
			return why
		}
		if !plainParamIgnoringIndex(p) {
			return "arithmetic evaluates the result of `" + w.ev.srcOf(p) + "` as code"
		}
		if w.varKind(p.Param.Value) == kindRun {
			return "arithmetic evaluates an element of `" + p.Param.Value + "`, set at run time, as code"
		}
		return ""
	}
	if p.Exp != nil && p.Exp.Op == syntax.DefaultUnsetOrNull || p.Exp != nil && p.Exp.Op == syntax.DefaultUnset {
		// ${x:-0}: x, or the default.
		if why := w.varCode(p.Param.Value, depth); why != "" {
			return why
		}
		if p.Exp.Word == nil {
			return ""
		}
		return w.operand(p.Exp.Word, depth)
	}
	if !plainParam(p) {
		return "arithmetic evaluates the result of `" + w.ev.srcOf(p) + "` as code"
	}
	return w.varCode(p.Param.Value, depth)
}

// indexExpr is the expression of a subscript (mvdan keeps it as an
// ArithmExpr, or a Word for associative arrays).
func indexExpr(x syntax.ArithmExpr) syntax.ArithmExpr { return x }

// varCode checks a variable whose value bash evaluates as an expression.
func (w *walker) varCode(name string, depth int) string {
	if bash.IsDigits(name) || name == "#" || name == "?" || name == "$" || name == "!" {
		if name == "#" || name == "?" || name == "$" || name == "!" {
			return ""
		}
	}
	if vals, ok := w.known(name); ok {
		for _, v := range vals {
			if why := w.arithText(v, depth+1); why != "" {
				return why
			}
		}
		return ""
	}
	if w.varKind(name) == kindRun {
		return "arithmetic evaluates `" + name + "`, a value the command sets at run time, as code"
	}
	return ""
}

// arithText checks text bash evaluates as an arithmetic expression.
func (w *walker) arithText(s string, depth int) string {
	t := strings.TrimSpace(s)
	switch {
	case t == "" || bash.IsArithNumber(t):
		return ""
	case bash.IsName(t):
		return w.varCode(t, depth)
	case len(t) > 4096 || depth > maxCodeDepth:
		return "arithmetic evaluates `" + clip(t) + "`"
	}
	if c, _ := bash.Cost(t); c > 1024 {
		return "arithmetic evaluates `" + clip(t) + "`"
	}
	x, ok := parseArith(t)
	if !ok {
		// mvdan cannot read it all; bash may (a here-document ended by
		// `E)` inside a substitution), and a syntax error stops bash only
		// after the subscripts before it ran (`1 a[$(rm x)]`).
		return "arithmetic evaluates `" + clip(t) + "`, which hookd cannot parse"
	}
	sub := *w
	sub.ev.src = t
	sub.ev.cr = 0
	if why := sub.arith(x, depth+1); why != "" {
		return "arithmetic evaluates `" + clip(t) + "`: " + why
	}
	return ""
}

// parseArith parses s as one arithmetic expression, all of it: mvdan's
// Arithmetic stops after the first expression and ignores the rest ("a
// a[$(rm x)]" reads as `a`), while bash reads on, expanding subscripts,
// until its syntax error.
func parseArith(s string) (syntax.ArithmExpr, bool) {
	x, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Arithmetic(strings.NewReader(s))
	if err != nil || x == nil || strings.TrimSpace(s[min(int(x.End().Offset()), len(s)):]) != "" {
		return nil, false
	}
	return x, true
}

// nameArg checks a variable name given to a builtin as text (read NAME,
// printf -v NAME, unset NAME, test -v NAME, declare NAME=…, a nameref's
// target, ${!x}): bash evaluates a subscript in it. It returns the base
// name (empty when there is none) and why it is not understood.
func (w *walker) nameArg(v string) (name, why string) {
	if bash.IsName(v) {
		return v, ""
	}
	i := strings.IndexByte(v, '[')
	if i <= 0 || !strings.HasSuffix(v, "]") || !bash.IsName(v[:i]) {
		return "", "" // not a valid identifier: bash refuses it
	}
	sub := v[i+1 : len(v)-1]
	switch {
	case sub == "@" || sub == "*" || bash.IsArithNumber(sub):
		return v[:i], ""
	case bash.IsName(sub):
		if why := w.varCode(sub, 1); why != "" {
			return v[:i], why
		}
		return v[:i], ""
	}
	return v[:i], "the subscript of `" + clip(v) + "` is evaluated as code"
}

// promptCode checks ${x@P}: the value is expanded like a prompt, with
// command substitution.
func (w *walker) promptCode(p *syntax.ParamExp) string {
	if p.Param == nil {
		return "prompt expansion of an expression"
	}
	if vals, ok := w.known(p.Param.Value); ok {
		for _, v := range vals {
			if strings.ContainsAny(v, "$`\\") {
				return "`" + w.ev.srcOf(p) + "` expands `" + clip(v) + "` as a prompt, running what it holds"
			}
		}
		return ""
	}
	if w.varKind(p.Param.Value) == kindRun {
		return "`" + w.ev.srcOf(p) + "` expands a value set at run time as a prompt, running what it holds"
	}
	return ""
}

// indirectCode checks ${!x}: x's value names the variable to read, with a
// subscript bash evaluates.
func (w *walker) indirectCode(p *syntax.ParamExp) string {
	if p.Param == nil {
		return ""
	}
	if vals, ok := w.known(p.Param.Value); ok {
		for _, v := range vals {
			if _, why := w.nameArg(v); why != "" {
				return why
			}
		}
		return ""
	}
	if w.varKind(p.Param.Value) == kindRun {
		return "`" + w.ev.srcOf(p) + "` reads the variable named by a value set at run time (a subscript there is code)"
	}
	return ""
}

// testCode checks the parts of [[ ]] bash evaluates: -v NAME and the
// operands of -eq, -ne, -lt, -le, -gt, -ge, which are arithmetic.
func (w *walker) testCode(x syntax.TestExpr) string {
	switch x := x.(type) {
	case *syntax.BinaryTest:
		switch x.Op {
		case syntax.TsEql, syntax.TsNeq, syntax.TsLeq, syntax.TsGeq, syntax.TsLss, syntax.TsGtr:
			for _, o := range []syntax.TestExpr{x.X, x.Y} {
				if wd, ok := o.(*syntax.Word); ok {
					if why := w.operand(wd, 0); why != "" {
						return why
					}
				}
			}
			return ""
		}
		if why := w.testCode(x.X); why != "" {
			return why
		}
		return w.testCode(x.Y)
	case *syntax.UnaryTest:
		if x.Op == syntax.TsVarSet || x.Op == syntax.TsRefVar {
			if wd, ok := x.X.(*syntax.Word); ok {
				cw := w.ev.word(wd)
				v, ok := cw.single()
				if !ok {
					return "`[[ -v " + w.ev.srcOf(wd) + " ]]` names a variable that is not a literal (a subscript there is code)"
				}
				_, why := w.nameArg(v)
				return why
			}
		}
		return w.testCode(x.X)
	case *syntax.ParenTest:
		return w.testCode(x.X)
	}
	return ""
}

// plainParam reports whether p is $name or ${name}.
func plainParam(p *syntax.ParamExp) bool {
	return p.Index == nil && plainParamIgnoringIndex(p)
}

func plainParamIgnoringIndex(p *syntax.ParamExp) bool {
	return !p.Excl && !p.Length && !p.Width && !p.IsSet && p.Slice == nil && p.Repl == nil && p.Names == 0 &&
		p.Exp == nil && p.NestedParam == nil && len(p.Modifiers) == 0 && p.Flags == nil
}

func clip(s string) string {
	if len(s) > 80 {
		return s[:77] + "…"
	}
	return s
}
