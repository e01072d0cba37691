// Command gencodec writes the msgpack codecs of package projection: for
// each struct type whose doc comment carries a //codec: directive, in
// each source file, the methods the directive names, into
// codec_<file>_gen.go beside it. Run it through go generate in the
// package's directory:
//
//	//go:generate go run ./internal/gencodec
//
// The directive is //codec: followed by a comma-separated list of
//
//   - decode: a fields table, decodeMsgpack and decodeField;
//   - unmarshal: unmarshal(b, seen), which decodes a whole payload (with
//     decode);
//   - append: appendMsgpack.
//
// The code is built on the package's hand-written primitives
// (msgpack.go: mpReader, decodeStruct, appendStr, ...), and follows the
// rules of vmihailenco/msgpack's reflection codec that they follow: a
// struct is a map of its fields in declaration order, an embedded struct
// without a tag inlined, an omitempty field left out when empty; int in
// its shortest form, int64 and uint64 in 9 bytes. A field of a type it
// has no rule for is an error, never a field left out. The output
// depends on the sources alone and is gofmt'ed, so that running it again
// changes nothing.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	dir := flag.String("dir", ".", "the directory of the package")
	flag.Parse()
	if err := run(*dir); err != nil {
		fmt.Fprintln(os.Stderr, "gencodec:", err)
		os.Exit(1)
	}
}

// run writes the generated files of the package in dir and removes
// generated files that no source asks for any more.
func run(dir string) error {
	files, err := Generate(dir)
	if err != nil {
		return err
	}
	stale, err := staleFiles(dir, files)
	if err != nil {
		return err
	}
	for _, name := range stale {
		if err := os.Remove(name); err != nil {
			return err
		}
	}
	for name, src := range files {
		if err := writeIfChanged(name, src); err != nil {
			return err
		}
	}
	return nil
}

// writeIfChanged writes src to name unless it holds src already, so that
// a file that does not change keeps its time.
func writeIfChanged(name string, src []byte) error {
	if old, err := os.ReadFile(name); err == nil && string(old) == string(src) {
		return nil
	}
	return os.WriteFile(name, src, 0o644)
}
