package vcs

// Tracked returns the work-tree paths the index holds (those of HEAD after a commit),
// sorted. The shed_exec guard of group zones compares the lists before and after a
// command's commit to find the files the command created.
func (l *Locked) Tracked() ([]string, error) {
	r, err := l.held()
	if err != nil {
		return nil, err
	}
	if err := r.refresh(); err != nil {
		return nil, err
	}
	out := make([]string, len(r.s.idx))
	for i, e := range r.s.idx {
		out[i] = e.Name
	}
	return out, nil
}
