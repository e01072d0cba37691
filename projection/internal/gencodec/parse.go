package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// pkg is what the generator knows of a package: its types, and the
// types each source file asks codecs for.
type pkg struct {
	name  string
	types map[string]*typeInfo
	files []*sourceFile // by name
	// custom are the types with msgpack methods of their own, which
	// reflection would call: the generator knows no rule for them.
	custom map[string]bool
}

type sourceFile struct {
	name  string      // base name, such as events.go
	types []*typeInfo // the types with a directive, in declaration order
}

type typeInfo struct {
	name   string
	strct  *ast.StructType // nil for any other type
	basic  string          // the underlying type of a named scalar: string, int64, ...
	want   directive
	hasDir bool
}

// directive is what a //codec: comment asks for.
type directive struct{ decode, unmarshal, append bool }

const directivePrefix = "//codec:"

// load parses the non-test, non-generated Go files of dir.
func load(dir string) (*pkg, error) {
	names, err := sourceNames(dir)
	if err != nil {
		return nil, err
	}
	p := &pkg{types: map[string]*typeInfo{}, custom: map[string]bool{}}
	fset := token.NewFileSet()
	for _, name := range names {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		if p.name == "" {
			p.name = f.Name.Name
		}
		sf, err := p.addFile(name, f)
		if err != nil {
			return nil, err
		}
		if len(sf.types) > 0 {
			p.files = append(p.files, sf)
		}
	}
	return p, nil
}

// sourceNames returns the sorted names of the Go files of dir that are
// neither tests nor generated.
func sourceNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if e.Type().IsRegular() && strings.HasSuffix(n, ".go") &&
			!strings.HasSuffix(n, "_test.go") && !strings.HasSuffix(n, "_gen.go") {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	return names, nil
}

// addFile records the types and msgpack methods of one file.
func (p *pkg) addFile(name string, f *ast.File) (*sourceFile, error) {
	sf := &sourceFile{name: name}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			p.noteMethod(d)
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				continue
			}
			for _, spec := range d.Specs {
				t, err := p.addType(spec.(*ast.TypeSpec), d)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
				if t.hasDir {
					sf.types = append(sf.types, t)
				}
			}
		}
	}
	return sf, nil
}

// noteMethod records a type that has a msgpack method of its own.
func (p *pkg) noteMethod(d *ast.FuncDecl) {
	if d.Recv == nil || len(d.Recv.List) != 1 {
		return
	}
	switch d.Name.Name {
	case "EncodeMsgpack", "DecodeMsgpack", "MarshalMsgpack", "UnmarshalMsgpack":
	default:
		return
	}
	recv := d.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		p.custom[id.Name] = true
	}
}

func (p *pkg) addType(spec *ast.TypeSpec, decl *ast.GenDecl) (*typeInfo, error) {
	t := &typeInfo{name: spec.Name.Name}
	switch x := spec.Type.(type) {
	case *ast.StructType:
		t.strct = x
	case *ast.Ident:
		if _, ok := basics[x.Name]; ok && spec.Assign == 0 {
			t.basic = x.Name
		}
	}
	doc := spec.Doc
	if doc == nil && len(decl.Specs) == 1 {
		doc = decl.Doc
	}
	want, ok, err := parseDirective(doc)
	if err != nil {
		return nil, fmt.Errorf("type %s: %w", t.name, err)
	}
	if ok && t.strct == nil {
		return nil, fmt.Errorf("type %s: a %s directive on a type that is not a struct", t.name, directivePrefix)
	}
	t.want, t.hasDir = want, ok
	p.types[t.name] = t
	return t, nil
}

// parseDirective reads the //codec: line of a doc comment.
func parseDirective(doc *ast.CommentGroup) (d directive, ok bool, err error) {
	if doc == nil {
		return d, false, nil
	}
	for _, c := range doc.List {
		rest, found := strings.CutPrefix(c.Text, directivePrefix)
		if !found {
			continue
		}
		if ok {
			return d, false, fmt.Errorf("two %s directives", directivePrefix)
		}
		ok = true
		for _, word := range strings.Split(rest, ",") {
			switch strings.TrimSpace(word) {
			case "decode":
				d.decode = true
			case "unmarshal":
				d.unmarshal = true
			case "append":
				d.append = true
			default:
				return d, false, fmt.Errorf("unknown codec %q in %q (want decode, unmarshal, append)", word, c.Text)
			}
		}
	}
	if d.unmarshal && !d.decode {
		return d, false, fmt.Errorf("unmarshal needs decode")
	}
	return d, ok, nil
}

// field is a msgpack field of a struct, embedded structs inlined.
type field struct {
	key       string
	path      string // the Go selector from the struct: Meta.Version
	typ       ast.Expr
	omitempty bool
}

// fields returns the msgpack fields of struct t in declaration order.
func (p *pkg) fields(t *typeInfo) ([]field, error) {
	var out []field
	for _, f := range t.strct.Fields.List {
		tag, err := msgpackTag(f)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", exprName(f.Type), err)
		}
		if len(f.Names) == 0 {
			inner, err := p.embedded(f, tag)
			if err != nil {
				return nil, err
			}
			out = append(out, inner...)
			continue
		}
		for _, n := range f.Names {
			fd, skip, err := namedField(n, f.Type, tag)
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", n.Name, err)
			}
			if !skip {
				out = append(out, fd)
			}
		}
	}
	return out, nil
}

// embedded returns the fields of an embedded struct, inlined.
func (p *pkg) embedded(f *ast.Field, tag string) ([]field, error) {
	id, ok := f.Type.(*ast.Ident)
	inner := p.types[exprName(f.Type)]
	if !ok || inner == nil || inner.strct == nil || tag != "" {
		return nil, fmt.Errorf("embedded %s: only a struct of the package without a msgpack tag is inlined", exprName(f.Type))
	}
	if p.custom[id.Name] {
		return nil, fmt.Errorf("embedded %s has msgpack methods of its own", id.Name)
	}
	fs, err := p.fields(inner)
	if err != nil {
		return nil, fmt.Errorf("embedded %s: %w", id.Name, err)
	}
	for i := range fs {
		fs[i].path = id.Name + "." + fs[i].path
	}
	return fs, nil
}

// namedField returns the field a named struct field is, or skip for a
// field reflection leaves out (tag "-").
func namedField(n *ast.Ident, typ ast.Expr, tag string) (_ field, skip bool, err error) {
	if tag == "-" {
		return field{}, true, nil
	}
	if !n.IsExported() {
		return field{}, false, fmt.Errorf("unexported field")
	}
	key, opts, _ := strings.Cut(tag, ",")
	if key == "" {
		return field{}, false, fmt.Errorf("no msgpack name in its tag")
	}
	fd := field{key: key, path: n.Name, typ: typ}
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "":
		case "omitempty":
			fd.omitempty = true
		default:
			return field{}, false, fmt.Errorf("msgpack option %q: only omitempty is known", o)
		}
	}
	return fd, false, nil
}

// msgpackTag returns the msgpack key of a field's tag ("" for none).
func msgpackTag(f *ast.Field) (string, error) {
	if f.Tag == nil {
		return "", nil
	}
	s, err := strconv.Unquote(f.Tag.Value)
	if err != nil {
		return "", err
	}
	return reflect.StructTag(s).Get("msgpack"), nil
}

// exprName returns a type expression as Go writes it.
func exprName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.StarExpr:
		return "*" + exprName(x.X)
	case *ast.ArrayType:
		if x.Len == nil {
			return "[]" + exprName(x.Elt)
		}
	case *ast.SelectorExpr:
		return exprName(x.X) + "." + x.Sel.Name
	case *ast.MapType:
		return "map[" + exprName(x.Key) + "]" + exprName(x.Value)
	}
	return fmt.Sprintf("%T", e)
}
