package openai

import (
	"context"
	"testing"

	"github.com/assay-eval/assay/internal/mock"
	"github.com/assay-eval/assay/internal/provider/httpcall/httpcalltest"
)

// BenchmarkComplete measures a whole call — SDK, HTTP on loopback and the
// mock server in the same process — plain and streamed.
func BenchmarkComplete(b *testing.B) {
	for _, stream := range []bool{false, true} {
		b.Run(httpcalltest.Mode(stream), func(b *testing.B) {
			s := mock.New(mock.Options{Default: "The answer is 4."})
			base, err := s.Start()
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			p, err := New(targetFor(base+"/v1", stream), "", nil)
			if err != nil {
				b.Fatal(err)
			}
			req := request("What is 2 + 2?")
			b.ReportAllocs()
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := p.Complete(context.Background(), req); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
