package projection

import (
	"fmt"
	"slices"
	"strings"
)

// settingChanged sets one project setting, keeping Settings sorted by
// key; the empty value removes it (back to its default).
func (f *fold) settingChanged() error {
	var p ProjectSettingChanged
	if err := f.payload(p.unmarshal); err != nil {
		return err
	}
	return f.project(func(cur *Project) error {
		s := slices.Clone(cur.Settings)
		i, found := slices.BinarySearchFunc(s, p.Key, func(v Setting, k string) int { return strings.Compare(v.Key, k) })
		switch {
		case found && p.Value == "":
			s = slices.Delete(s, i, i+1)
		case found:
			s[i].Value = p.Value
		case p.Value != "":
			s = slices.Insert(s, i, Setting(p))
		}
		if len(s) == 0 {
			s = nil
		}
		cur.Settings = s
		return nil
	})
}

// approvalConsumed records the one use of an approval.
func (f *fold) approvalConsumed() error {
	var p ApprovalConsumed
	if err := f.payload(p.unmarshal); err != nil {
		return err
	}
	a, err := f.s.Approval(f.r.Project, p.ID)
	if err != nil {
		return err
	}
	if a == nil {
		return fmt.Errorf("%w: approval %s does not exist", ErrInconsistent, p.ID)
	}
	a.UsedAt, a.UsedBy = TimeOf(f.r.Time), f.r.Actor
	a.Version, a.Seq, a.UpdatedAt = f.r.Version, f.r.Seq, TimeOf(f.r.Time)
	return putBack(f, f.s.PutApproval, a)
}
