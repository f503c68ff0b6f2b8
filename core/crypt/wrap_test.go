package crypt

import (
	"bytes"
	"errors"
	"testing"
)

func TestDeriveKEK(t *testing.T) {
	master := []byte("a master secret of thirty-two b!")
	salt := []byte("install salt")
	a := DeriveKEK(master, "alice", salt)
	if a != DeriveKEK(master, "alice", salt) {
		t.Fatal("DeriveKEK is not deterministic")
	}
	for name, other := range map[string]Key{
		"another user":   DeriveKEK(master, "bob", salt),
		"a user prefix":  DeriveKEK(master, "alic", salt),
		"another salt":   DeriveKEK(master, "alice", []byte("other salt")),
		"another master": DeriveKEK([]byte("another master secret, 32 bytes"), "alice", salt),
	} {
		if other == a {
			t.Errorf("%s gives the same KEK", name)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("DeriveKEK accepted a 4-byte master secret")
		}
	}()
	DeriveKEK([]byte("weak"), "alice", salt)
}

func TestWrapUnwrap(t *testing.T) {
	kek, dek := testKey(t), testKey(t)
	w, err := Wrap(kek, dek, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if len(w) != WrappedSize || bytes.Contains(w, dek[:8]) {
		t.Fatalf("wrapped key: %d bytes (want %d), or holds the key in clear", len(w), WrappedSize)
	}
	if again, _ := Wrap(kek, dek, "alice"); bytes.Equal(again, w) {
		t.Error("two wraps of one key are equal: the nonce is not random")
	}
	got, err := Unwrap(kek, w, "alice")
	if err != nil || got != *dek {
		t.Fatalf("Unwrap: %v (key equal: %v)", err, got == *dek)
	}

	other := testKey(t)
	type unwrapCase struct {
		name    string
		kek     *Key
		wrapped []byte
		user    string
		want    error
	}
	cases := []unwrapCase{
		{"wrong kek", other, w, "alice", ErrAuth},
		{"wrong user id", kek, w, "bob", ErrAuth},
		{"empty user id", kek, w, "", ErrAuth},
		{"too short", kek, w[:WrappedSize-1], "alice", ErrFormat},
		{"too long", kek, append(bytes.Clone(w), 0), "alice", ErrFormat},
		{"empty", kek, nil, "alice", ErrFormat},
	}
	for i := range w {
		bad := bytes.Clone(w)
		bad[i] ^= 1
		want := ErrAuth
		if i == 0 {
			want = ErrFormat // the version byte
		}
		cases = append(cases, unwrapCase{"flipped byte", kek, bad, "alice", want})
	}
	for i, c := range cases {
		if k, err := Unwrap(c.kek, c.wrapped, c.user); !errors.Is(err, c.want) || k != (Key{}) {
			t.Errorf("%s (%d): Unwrap = %v, want %v and a zero key", c.name, i, err, c.want)
		}
	}
}
