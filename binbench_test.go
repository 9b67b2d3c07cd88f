package main

import (
	"math/rand"
	"testing"
)

func binData(zero bool) []byte {
	b := make([]byte, 1<<20)
	rand.New(rand.NewSource(1)).Read(b)
	if !zero {
		for i := range b {
			if b[i] == 0 {
				b[i] = 1
			}
		}
	}
	// avoid signatures at the start
	b[0] = 'x'
	return b
}

func BenchmarkBinaryBinaryNoZero(b *testing.B) {
	d := binData(false)
	sc := &scrubber{red: newRedactor("tok_abcdefgh"), mask: true}
	b.ResetTimer()
	for range b.N {
		sc.binary(d)
	}
}

func BenchmarkBinaryBinaryZero(b *testing.B) {
	d := binData(true)
	sc := &scrubber{red: newRedactor("tok_abcdefgh"), mask: true}
	b.ResetTimer()
	for range b.N {
		sc.binary(d)
	}
}
