package main

import (
	"fmt"
	"go/ast"
)

// basic is the rule for a field of a basic type (or a named type whose
// underlying type it is): the reader method that reads it, the append
// function that writes it and the type that function takes, and when an
// omitempty field of it is present (%s is the field).
type basic struct{ read, write, param, present string }

var basics = map[string]basic{
	"string":  {"r.str", "appendStr", "string", `%s != ""`},
	"bool":    {"r.boolField", "appendBool", "bool", "%s"},
	"int":     {"r.intField", "appendInt", "int64", "%s != 0"},     // its shortest form
	"int64":   {"r.int64Field", "appendInt64", "int64", "%s != 0"}, // 9 bytes
	"uint64":  {"r.uintField", "appendUint64", "uint64", "%s != 0"},
	"float64": {"r.float64Field", "appendFloat64", "float64", "%s != 0"},
}

// fieldCodec is the code that reads and writes one field, x.
type fieldCodec struct {
	read string // an expression of type error that reads x from r
	// write is an expression that appends x to the buffer %s; when
	// nilable, it appends *x, and x itself may be nil (written as nil).
	write   string
	nilable bool
	present string // when an omitempty x is written
	// decodes and appends are the struct types of the package whose
	// own decoder and encoder the code calls.
	decodes, appends string
}

// codecOf returns the code for field x of type e.
func (p *pkg) codecOf(e ast.Expr, x string) (fieldCodec, error) {
	switch t := e.(type) {
	case *ast.Ident:
		return p.identCodec(t.Name, x)
	case *ast.StarExpr:
		return p.pointerCodec(t.X, x)
	case *ast.ArrayType:
		if t.Len == nil {
			return p.sliceCodec(t.Elt, x)
		}
	}
	return fieldCodec{}, fmt.Errorf("no rule for a field of type %s", exprName(e))
}

// identCodec: a basic type, a named scalar or a struct of the package.
func (p *pkg) identCodec(name, x string) (fieldCodec, error) {
	if b, ok := basics[name]; ok {
		return fieldCodec{read: b.read + "(&" + x + ")", write: writeCall(b, name, x), present: fmt.Sprintf(b.present, x)}, nil
	}
	t := p.types[name]
	switch {
	case t == nil:
		return fieldCodec{}, fmt.Errorf("no rule for a field of type %s", name)
	case p.custom[name]:
		return fieldCodec{}, fmt.Errorf("type %s has msgpack methods of its own", name)
	case t.basic != "":
		b := basics[t.basic]
		read := fmt.Sprintf("%s((*%s)(&%s))", b.read, t.basic, x)
		return fieldCodec{read: read, write: writeCall(b, name, x), present: fmt.Sprintf(b.present, x)}, nil
	case t.strct != nil:
		return fieldCodec{read: x + ".decodeMsgpack(r)", write: x + ".appendMsgpack(%s)", decodes: name, appends: name}, nil
	}
	return fieldCodec{}, fmt.Errorf("no rule for a field of type %s", name)
}

// writeCall is the call that appends x, of type typ, by rule b.
func writeCall(b basic, typ, x string) string {
	if typ != b.param {
		x = b.param + "(" + x + ")"
	}
	return b.write + "(%s, " + x + ")"
}

// pointerCodec: a pointer to a struct of the package, or to a basic
// type or []string.
func (p *pkg) pointerCodec(elem ast.Expr, x string) (fieldCodec, error) {
	c := fieldCodec{nilable: true, present: x + " != nil"}
	name := exprName(elem)
	if t := p.types[name]; t != nil && t.strct != nil && !p.custom[name] {
		c.read = fmt.Sprintf("structPtr[%s](r, &%s)", name, x)
		c.write, c.decodes, c.appends = x+".appendMsgpack(%s)", name, name
		return c, nil
	}
	var method string
	switch {
	case name == "[]string":
		method = "r.strings"
	case basics[name].read != "":
		method = basics[name].read
	default:
		return fieldCodec{}, fmt.Errorf("no rule for a field of type *%s", name)
	}
	inner, err := p.codecOf(elem, "*"+x)
	if err != nil {
		return fieldCodec{}, err
	}
	c.read = fmt.Sprintf("ptrField(r, &%s, %s)", x, method)
	c.write = inner.write
	return c, nil
}

// sliceCodec: []string, or a slice of structs of the package or of
// pointers to them.
func (p *pkg) sliceCodec(elem ast.Expr, x string) (fieldCodec, error) {
	c := fieldCodec{present: "len(" + x + ") > 0"}
	name := exprName(elem)
	star, isPtr := elem.(*ast.StarExpr)
	if isPtr {
		name = exprName(star.X)
	}
	t := p.types[name]
	switch {
	case name == "string" && !isPtr:
		c.read, c.write = "r.strings(&"+x+")", "appendStrings(%s, "+x+")"
	case t == nil || t.strct == nil || p.custom[name]:
		return fieldCodec{}, fmt.Errorf("no rule for a field of type []%s", exprName(elem))
	case isPtr:
		c.read = fmt.Sprintf("structPtrs[%s](r, &%s)", name, x)
		c.write, c.decodes, c.appends = "appendPtrs(%s, "+x+")", name, name
	default:
		c.read = fmt.Sprintf("structs[%s](r, &%s)", name, x)
		c.write, c.decodes, c.appends = fmt.Sprintf("appendValues[%s](%%s, %s)", name, x), name, name
	}
	return c, nil
}
