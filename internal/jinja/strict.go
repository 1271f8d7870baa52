package jinja

import (
	"errors"
	"fmt"
	"html"
	"math"
	"strings"
)

// This file holds the places where the fork follows Python jinja2 more
// closely than upstream: undefined values that raise when used in
// arithmetic or dereferenced, Python's typing of "+", Markup (the safe
// filter) escaping what is added to it, generators that tojson refuses,
// and loop variables unpacked the same way in a loop's filter as in its
// body.

// ErrUndefined is wrapped by every UndefinedError.
var ErrUndefined = errors.New("jinja: undefined")

// UndefinedError is jinja2's UndefinedError: an undefined value was used
// where a value is needed ("'x' is undefined", "'dict object' has no
// attribute 'content'").
type UndefinedError struct{ Message string }

func (e *UndefinedError) Error() string { return "UndefinedError: " + e.Message }

// Unwrap returns ErrUndefined.
func (e *UndefinedError) Unwrap() error { return ErrUndefined }

// TypeError is Python's TypeError from an operator given the wrong types.
type TypeError struct{ Message string }

func (e *TypeError) Error() string { return "TypeError: " + e.Message }

// pyType is the Python type name of a value, for error messages.
func pyType(v Value) string {
	switch v.kind {
	case KindUndefined:
		return "Undefined"
	case KindNone:
		return "NoneType"
	case KindBool:
		return "bool"
	case KindInt:
		return "int"
	case KindFloat:
		return "float"
	case KindString:
		return "str"
	case KindList:
		if v.gen {
			return "generator"
		}
		return "list"
	case KindDict:
		return "dict"
	}
	return "function"
}

// numeric reports whether v takes part in arithmetic as a number (Python's
// bool is an int).
func numeric(v Value) bool { return v.IsNumber() || v.IsBool() }

// arith applies an arithmetic operator with Python's rules.
func (e *evaluator) arith(op string, a, b Value) (Value, error) {
	for _, v := range []Value{a, b} {
		if v.IsUndefined() {
			return Undefined(), &UndefinedError{Message: v.undefinedReason()}
		}
	}
	switch {
	case op == "+" && a.IsString() && b.IsString():
		as, bs := a.AsString(), b.AsString()
		if a.safe != b.safe {
			// Markup + str escapes the str (and str + Markup alike).
			if a.safe {
				bs = html.EscapeString(bs)
			} else {
				as = html.EscapeString(as)
			}
		}
		if err := e.budget.checkBytes(int64(len(as)) + int64(len(bs))); err != nil {
			return Undefined(), err
		}
		return Value{kind: KindString, v: as + bs, safe: a.safe || b.safe}, nil
	case op == "+" && a.IsList() && b.IsList():
		if a.AsList().Len()+b.AsList().Len() > e.budget.lim.MaxItems {
			return Undefined(), &LimitError{What: "list size", Limit: int64(e.budget.lim.MaxItems)}
		}
		return addValues(a, b), nil
	case op == "*" && (a.IsString() && b.IsInt() || a.IsInt() && b.IsString()):
		s, n := a, b
		if a.IsInt() {
			s, n = b, a
		}
		if err := e.budget.checkBytes(satMul(int64(len(s.AsString())), max(n.AsInt(), 0))); err != nil {
			return Undefined(), err
		}
		if n.AsInt() <= 0 {
			return NewString(""), nil
		}
		return NewString(strings.Repeat(s.AsString(), int(n.AsInt()))), nil
	case op == "*" && (a.IsList() && b.IsInt() || a.IsInt() && b.IsList()):
		l, n := a, b
		if a.IsInt() {
			l, n = b, a
		}
		count := max(n.AsInt(), 0)
		if satMul(int64(l.AsList().Len()), count) > int64(e.budget.lim.MaxItems) {
			return Undefined(), &LimitError{What: "list size", Limit: int64(e.budget.lim.MaxItems)}
		}
		items := make([]Value, 0, int64(l.AsList().Len())*count)
		for range count {
			items = append(items, l.AsList().Items...)
		}
		return NewList(items), nil
	case op == "%" && a.IsString():
		return Undefined(), &TypeError{Message: "printf-style formatting is not supported"}
	case !numeric(a) || !numeric(b):
		if op == "+" && a.IsString() {
			return Undefined(), &TypeError{Message: fmt.Sprintf("can only concatenate str (not %q) to str", pyType(b))}
		}
		return Undefined(), &TypeError{Message: fmt.Sprintf("unsupported operand type(s) for %s: '%s' and '%s'", op, pyType(a), pyType(b))}
	}
	switch op {
	case "+":
		return addValues(a, b), nil
	case "-":
		return subValues(a, b), nil
	case "*":
		return mulValues(a, b), nil
	case "/":
		if toFloat64(b) == 0 {
			return Undefined(), &TypeError{Message: "ZeroDivisionError: division by zero"}
		}
		return divValues(a, b), nil
	case "//", "%":
		if toFloat64(b) == 0 {
			return Undefined(), &TypeError{Message: "ZeroDivisionError: integer division or modulo by zero"}
		}
		if a.IsFloat() || b.IsFloat() {
			q := math.Floor(toFloat64(a) / toFloat64(b))
			if op == "//" {
				return NewFloat(q), nil
			}
			return NewFloat(toFloat64(a) - q*toFloat64(b)), nil
		}
		x, y := toInt64(a), toInt64(b)
		q, r := x/y, x%y
		if r != 0 && (r < 0) != (y < 0) { // Python floors
			q--
			r += y
		}
		if op == "//" {
			return NewInt(q), nil
		}
		return NewInt(r), nil
	case "**":
		if a.IsInt() && b.IsInt() && b.AsInt() >= 0 {
			return intPow(a.AsInt(), b.AsInt())
		}
		return powValues(a, b), nil
	}
	return Undefined(), fmt.Errorf("unknown operator %q", op)
}

// intPow is Python's int ** int for results that fit 64 bits
// (exponentiation by squaring, so a huge exponent costs 64 steps).
func intPow(base, exp int64) (Value, error) {
	overflow := &TypeError{Message: "integer power overflows 64 bits"}
	result := int64(1)
	for exp > 0 {
		if exp&1 == 1 {
			r := result * base
			if base != 0 && (r/base != result || (result == -1 && base == math.MinInt64)) {
				return Undefined(), overflow
			}
			result = r
		}
		exp >>= 1
		if exp > 0 {
			sq := base * base
			if base != 0 && (sq/base != base || base == math.MinInt64) {
				if base == 1 || base == -1 {
					sq = 1
				} else {
					return Undefined(), overflow
				}
			}
			base = sq
		}
	}
	return NewInt(result), nil
}

// bindLoopVars sets a for loop's variables for one item, unpacking pairs
// for "for k, v in …" as Python does (and failing as Python does when the
// item is not a pair).
func bindLoopVars(s *scope, n *forNode, i int, item Value) error {
	if n.keyVar == "" {
		s.set(n.valVar, item)
		return nil
	}
	var parts []Value
	switch {
	case item.IsList():
		parts = item.AsList().Items
	case item.IsString():
		for _, r := range item.AsString() {
			parts = append(parts, NewString(string(r)))
		}
	default:
		return &TypeError{Message: fmt.Sprintf("cannot unpack non-iterable %s object", pyType(item))}
	}
	if len(parts) != 2 {
		return &TypeError{Message: fmt.Sprintf("cannot unpack %d values into 2 loop variables (item %d)", len(parts), i)}
	}
	s.set(n.keyVar, parts[0])
	s.set(n.valVar, parts[1])
	return nil
}

// generatorFilters return generators in jinja2.
var generatorFilters = map[string]bool{"map": true, "select": true, "reject": true, "selectattr": true, "rejectattr": true}

// callFilter runs a filter under the render's limits, with the jinja2
// behaviours of safe, escape and tojson.
func (e *evaluator) callFilter(name string, fn Value, args []Value, kwargs map[string]Value) (Value, error) {
	if len(args) > 0 {
		switch {
		case args[0].IsList():
			if err := e.budget.charge(int64(args[0].AsList().Len())); err != nil {
				return Undefined(), err
			}
		case args[0].IsString():
			if err := e.budget.charge(int64(len(args[0].AsString())) / 64); err != nil {
				return Undefined(), err
			}
		}
	}
	if size := estimateFilter(name, args, kwargs); size >= 0 {
		if err := e.budget.checkBytes(size); err != nil {
			return Undefined(), err
		}
	}
	switch name {
	case "safe":
		if len(args) == 0 {
			return NewString(""), nil
		}
		return Value{kind: KindString, v: printValue(args[0]), safe: true}, nil
	case "escape", "e":
		if len(args) == 0 {
			return NewString(""), nil
		}
		if args[0].IsString() && args[0].safe {
			return args[0], nil
		}
		// html.EscapeString writes markupsafe's entities (&#34;, &#39;).
		return Value{kind: KindString, v: html.EscapeString(printValue(args[0])), safe: true}, nil
	case "tojson":
		if len(args) > 0 && args[0].gen {
			return Undefined(), &TypeError{Message: "Object of type generator is not JSON serializable"}
		}
	}
	out, err := fn.AsCallable().Fn(args, kwargs)
	if err != nil {
		return out, err
	}
	out.gen = generatorFilters[name] && out.IsList()
	return out, nil
}

// checkPrintable charges the work of printing a container.
func (e *evaluator) checkPrintable(v Value) error {
	switch {
	case v.IsList():
		return e.budget.charge(int64(v.AsList().Len()))
	case v.IsDict():
		return e.budget.charge(int64(v.AsDict().Len()))
	}
	return nil
}
