package view

import "testing"

func TestMarshal_NoHTMLEscapeNoNewline(t *testing.T) {
	got, err := Marshal(map[string]string{"t": "<a & b>"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"t":"<a & b>"}`; string(got) != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
}
