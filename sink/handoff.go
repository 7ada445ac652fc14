package sink

import "simpler.dev/log/internal/handoff"

// plainRecords is the queue's second half: the plain records (package
// handoff) of the ring's slots, by the same index. A slot whose n is 0
// holds its record here instead of bytes (a record of bytes is never
// empty: submit refuses those). Allocated with the ring; apart from it so
// that the ring, which holds no pointers, is never scanned by the
// collector, and a slot of bytes stays nine lines.
type plainRecords [slots]handoff.Record

// renderWater is the queue depth past which a producer renders its plain
// record itself (see claimRecord): a quarter of the queue, twice napWater,
// so that a writer napping between small drains is woken (at napWater)
// well before its producers give up handing records off. With both at a
// quarter, a producer of static records 250 ns apart rendered 7-22 % of
// them itself, the writer's naps overshooting the mark; with the wake at
// an eighth, 2-4 %.
const renderWater = slots / 4

func init() {
	handoff.Attach = func(s any, t handoff.Tally) handoff.Queue {
		sk := s.(*Sink)
		sk.w.tally = t
		return handoff.Queue{Claim: sk.claimRecord, Publish: sk.publishRecord}
	}
}

// claimRecord is submit's claim for a plain record (handoff.Queue.Claim).
// It declines past renderWater: the writer is behind, and rendering would
// put it further behind, so the producer renders its record and writes it
// as any other, and producers that outrun the writer share its work
// instead of filling the queue. It decides before it claims: the time
// between a claim and its publishing store is time the writer may have
// to wait at that slot (a producer preempted there stops the drain), so
// nothing longer than a copy goes into it.
func (s *Sink) claimRecord() (*handoff.Record, uint64, handoff.Outcome) {
	if h := s.q.head.Load(); h&closedBit != 0 || s.q.deeper(h, renderWater) {
		return nil, 0, handoff.Declined
	}
	pos, attempts, won := s.q.tryClaim() // inlined, as in submit
	if !won {
		if pos&closedBit != 0 {
			return nil, 0, handoff.Declined
		}
		// Lost to another producer: the rest of a claim, as submit's.
		var c claimer
		var err error
		if pos, err = s.q.claim(pos, attempts, &c, &s.w.bell); err != nil {
			s.w.bell.poke()
			return nil, 0, handoff.Counted
		}
		if pos&closedBit != 0 {
			return nil, 0, handoff.Declined
		}
	}
	return &s.q.records[pos&mask], pos, handoff.Claimed
}

// publishRecord publishes the plain record filled at pos: its slot's n
// is 0, which tells the writer to render it.
func (s *Sink) publishRecord(pos uint64) {
	sl := &s.q.ring[pos&mask]
	sl.n = 0
	sl.seq.Store(pos + 1)
	s.w.bell.poke()
	if pos%waterEvery == 0 {
		s.q.water(pos, &s.w.bell)
	}
}
