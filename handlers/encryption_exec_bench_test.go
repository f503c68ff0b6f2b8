package handlers_test

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkEncryptedCalls is the price of encryption on everyday calls, plain and encrypted
// Storage interleaved in one run: shed_read of a 10 KB file, and shed_exec in a zone of 100
// files of 10 KB: wc -c and sed -i on one file (the mirror holds that file only) and ls -l of
// the zone (the mirror holds the whole zone). Run:
//
//	FILESHED_SKIP_CATALOGUE=1 go test ./handlers -run '^$' -bench EncryptedCalls -benchtime 100x
func BenchmarkEncryptedCalls(b *testing.B) {
	plain := start(b, nil)
	sealed := startSealed(b, nil)
	body := strings.Repeat("0123456789abcde\n", 640) // 10 KB
	for _, e := range []*env{plain, sealed} {
		for i := range 100 {
			e.write(fmt.Sprintf("%sf%03d.txt", execDir, i), body)
		}
	}
	wantOK(b, sealed.post("shed_encryption", map[string]any{"action": "migrate"}, nil))
	sealed.sealedOnDisk(execDir+"f000.txt", "0123456789abcde")
	ops := []timed{}
	for _, c := range []struct{ name, tool, body string }{
		{"read", "shed_read", `{"zone":"storage","path":"f001.txt"}`},
		{"exec-wc", "shed_exec", `{"zone":"storage","cmd":"wc","args":["-c","f002.txt"]}`},
		{"exec-sed", "shed_exec", `{"zone":"storage","cmd":"sed","args":["-i","s/0/0/","f003.txt"]}`},
		{"exec-ls-zone", "shed_exec", `{"zone":"storage","cmd":"ls","args":["-l"]}`},
	} {
		for _, side := range []struct {
			name string
			e    *env
		}{{"plain", plain}, {"encrypted", sealed}} {
			post := poster(b, side.e, c.tool)
			body := c.body
			ops = append(ops, timed{c.name + "-" + side.name, func(int) { post(body) }})
		}
	}
	p50 := latencies(b, ops...)
	for i := 0; i < len(p50); i += 2 {
		b.ReportMetric(float64(p50[i+1])/float64(p50[i]), ops[i+1].name+"/plain-ratio")
	}
}
