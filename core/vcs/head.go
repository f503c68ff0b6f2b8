package vcs

// Head returns the id of the commit the branch names, "" while it has none. core keeps it
// to put a file back as it was before a commit it cannot trust (a write that a running
// command changed while it was committed).
func (l *Locked) Head() (string, error) {
	r, err := l.held()
	if err != nil {
		return "", err
	}
	if err := r.refresh(); err != nil {
		return "", err
	}
	if r.s.head.IsZero() {
		return "", nil
	}
	return r.s.head.String(), nil
}
