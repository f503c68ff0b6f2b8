package openapi_test

import (
	"reflect"
	"sync"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/openapi"
)

// TestConfigIsSafeConcurrently: servers built at once (as parallel tests build them) call
// Config at once and register their schemas meanwhile. Config used to set huma's
// process-wide DefaultArrayNullable on every call, while another server's registration read
// it: a data race under -race. Every server still gets arrays that are not nullable.
func TestConfigIsSafeConcurrently(t *testing.T) {
	start := make(chan struct{})
	nullable := make([]bool, 4)
	var wg sync.WaitGroup
	for i := range nullable {
		wg.Go(func() {
			<-start
			c := openapi.Config("test")
			nullable[i] = huma.SchemaFromType(c.Components.Schemas, reflect.TypeFor[[]string]()).Nullable
		})
	}
	close(start)
	wg.Wait()
	for i, n := range nullable {
		if n {
			t.Fatalf("server %d: arrays are nullable", i)
		}
	}
}
