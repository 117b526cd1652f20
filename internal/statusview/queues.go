package statusview

import (
	"io"
	"strconv"
	"time"

	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/client/queues"
	"github.com/tinyctl/tinyctl/internal/cli"
)

// QueueReading is what reading one status row's queue returned: the queue
// on that row's cluster, or why it is absent. None marks a row with no
// cluster, whose queue is not asked for.
type QueueReading struct {
	Queue queues.Queue
	Err   error
	None  bool
}

// shown is the reading as the JSON shows it: the queue, or why it is
// absent.
func (r QueueReading) shown() (*QueueInfo, string) {
	if r.Err != nil {
		return nil, r.Err.Error()
	}
	return queueInfo(r.Queue), ""
}

// WithQueues adds each item's queue (readings[i] is items[i]'s).
func (l StatusList) WithQueues(readings []QueueReading) StatusList {
	for i, rd := range readings {
		if !rd.None {
			l.Items[i].Queue, l.Items[i].QueueError = rd.shown()
		}
	}
	return l
}

// WriteQueueTable writes rows as WriteTable does with each row's queue
// instead of REASON, REVISION and AGE: JOBS (held in the stream), PENDING
// (not yet handed to a worker), ACK-PENDING (being worked on), REDELIVERED
// and OLDEST (the oldest job's age). A row whose queue could not be read
// shows "-" there; problems returns why, each reason once.
func WriteQueueTable(w io.Writer, style cli.Style, rows []client.Row, readings []QueueReading, now time.Time) (problems []string, err error) {
	t := newTable("NAMESPACE", "NAME", "CLUSTER", "READY", "JOBS", "PENDING", "ACK-PENDING", "REDELIVERED", "OLDEST", "HEARTBEAT")
	seen := map[string]bool{}
	for i, r := range rows {
		cells := []cell{plain("-"), plain("-"), plain("-"), plain("-"), plain("-")}
		switch rd := readings[i]; {
		case rd.None:
		case rd.Err != nil:
			if msg := rd.Err.Error(); !seen[msg] {
				seen[msg] = true
				problems = append(problems, msg)
			}
		default:
			q := rd.Queue
			cells = []cell{plain(strconv.FormatUint(q.Jobs, 10)), plain(strconv.FormatUint(q.Pending, 10)),
				plain(strconv.Itoa(q.AckPending)), plain(strconv.Itoa(q.Redelivered)), plain("-")}
			if !q.Oldest.IsZero() {
				cells[4] = plain(cli.Age(q.Oldest, now))
			}
		}
		t.row(append(append([]cell{plain(r.Namespace()), plain(r.Name()), plain(dash(r.Cluster())), readyCell(style, r)}, cells...),
			heartbeatCell(style, r, now))...)
	}
	return problems, t.write(w)
}
