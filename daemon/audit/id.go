package audit

import (
	"crypto/rand"
	"encoding/binary"
	"sync"
	"time"
)

// crockford is Crockford's base32 alphabet, as used by ULIDs.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

var idMu sync.Mutex
var lastID struct {
	ms   uint64
	rand [10]byte
}

// NewDecisionID returns a ULID: 26 characters, sortable by time, unique. IDs made in the
// same millisecond increase monotonically, so log order and ID order agree.
func NewDecisionID() string {
	ms := uint64(time.Now().UnixMilli())
	idMu.Lock()
	if ms <= lastID.ms {
		ms = lastID.ms
		// Increment the 80-bit random part.
		for i := 9; i >= 0; i-- {
			lastID.rand[i]++
			if lastID.rand[i] != 0 {
				break
			}
		}
	} else {
		_, _ = rand.Read(lastID.rand[:])
		lastID.ms = ms
	}
	var b [16]byte
	binary.BigEndian.PutUint16(b[0:2], uint16(ms>>32))
	binary.BigEndian.PutUint32(b[2:6], uint32(ms))
	copy(b[6:], lastID.rand[:])
	idMu.Unlock()
	return encodeULID(b)
}

func encodeULID(b [16]byte) string {
	// 128 bits → 26 base32 characters (the first carries 3 bits).
	var out [26]byte
	hi := binary.BigEndian.Uint64(b[0:8])
	lo := binary.BigEndian.Uint64(b[8:16])
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return string(out[:])
}
