//! The frontier's bookkeeping, without a gate and without a clock of its own (the caller gives
//! `now`): a queue per politeness group (priority bands, FIFO in each), the groups that can go
//! now (round robin), the groups told a time (a timer heap), the groups to ask, and the bytes all
//! of it holds. Every operation is O(log groups) at most, whatever the number of URLs.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::mem::size_of;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

/// A group's name (its politeness key), shared by the map, the lists and the jobs handed out.
pub(super) type Key = Arc<str>;

/// Bytes charged per queued URL beyond its text: its slot in its band's deque, and up to two
/// more of spare capacity (a deque is shrunk once it has over three slots per URL, `Band::pop`).
pub(super) const URL_OVERHEAD: usize = 3 * size_of::<Box<str>>();

/// Bytes charged per priority band: its place in the group's list (and as much spare), and the
/// four slots a deque holds at the least.
pub(super) const BAND_OVERHEAD: usize = 2 * size_of::<Band>() + 4 * size_of::<Box<str>>();

/// Bytes charged per group beyond its name and its bands: the map's bucket (a map is
/// shrunk once it has over four times the room its groups need, and hashbrown holds 8/7 of its
/// room, so up to 4.6 buckets a group), the name's shared allocation header, and its place in
/// the ready, to-ask and timer lists (each shrunk, like the map, past four times its length).
pub(super) const GROUP_OVERHEAD: usize = 5 * (size_of::<(Key, Group)>() + 1)
    + 2 * size_of::<usize>()
    + 4 * size_of::<Reverse<(Instant, Key)>>();

/// The lists' and the map's least room (below it nothing is shrunk), charged once.
pub(super) const FIXED_OVERHEAD: usize = 64
    * (size_of::<(Key, Group)>() + 1 + 2 * size_of::<Key>() + size_of::<Reverse<(Instant, Key)>>());

/// The longest a group is left before it is asked again when every place was in use.
const MAX_STALL: Duration = Duration::from_secs(1);

struct Band {
    priority: i32,
    urls: VecDeque<Box<str>>,
}

pub(super) struct Group {
    /// Highest priority first.
    bands: Vec<Band>,
    len: usize,
    /// Handed out, and their jobs not ended.
    active: u32,
    phase: Phase,
    /// Asks in a row that found every place in use (the next ask waits longer).
    stalls: u8,
    /// Since when its first URL has been first in line with a place free (what `Job::waited`
    /// reports).
    head_since: Instant,
}

/// Where a group is in its round: exactly one at a time, and in the list that goes with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Phase {
    /// Nothing to do until a URL is pushed or a job ends (empty, or every place handed out).
    Idle,
    /// To be asked when it can go (in `to_ask`).
    ToAsk,
    /// Being asked, by one `next`.
    Asking,
    /// To be asked at a time (in `timers`).
    AskAt,
    /// Told a time by the gate (in `timers`): ready then.
    Waiting,
    /// Can go now (in `ready`).
    Ready,
}

/// What the gate said of a group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answer {
    /// It can take a request in this long (zero: now).
    In(Duration),
    /// Every place is in use: when a request in flight ends.
    WhenOneEnds,
}

/// Why a URL was not queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refused {
    /// Over the byte budget; `alone` when the URL would be even in an empty frontier, where it
    /// takes `bytes`.
    Full {
        alone: bool,
        bytes: usize,
    },
    GroupFull,
}

/// A URL handed out: its group, what the caller made of its text, its priority.
pub(super) struct HandedOut<T> {
    pub(super) key: Key,
    pub(super) item: T,
    pub(super) priority: i32,
    /// How long it stood first in its group's line before it was handed out.
    pub(super) waited: Duration,
}

pub(super) struct Queues {
    groups: HashMap<Key, Group, foldhash::fast::RandomState>,
    ready: VecDeque<Key>,
    to_ask: VecDeque<Key>,
    timers: BinaryHeap<Reverse<(Instant, Key)>>,
    /// Bytes charged (see the overheads above).
    bytes: usize,
    urls: usize,
    /// Jobs handed out and not ended, over every group.
    active: usize,
    max_bytes: usize,
    max_per_group: usize,
    concurrency: u32,
    /// The wait before a group with a place left is asked again after a hand-out.
    min_delay: Duration,
}

impl Queues {
    pub(super) fn new(
        max_bytes: usize,
        max_per_group: usize,
        concurrency: usize,
        min_delay: Duration,
    ) -> Queues {
        Queues {
            groups: HashMap::default(),
            ready: VecDeque::new(),
            to_ask: VecDeque::new(),
            timers: BinaryHeap::new(),
            bytes: FIXED_OVERHEAD,
            urls: 0,
            active: 0,
            max_bytes,
            max_per_group,
            concurrency: u32::try_from(concurrency.max(1)).unwrap_or(u32::MAX),
            min_delay,
        }
    }

    /// Bytes charged now.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// URLs queued.
    pub(super) fn len(&self) -> usize {
        self.urls
    }

    /// Whether `key`'s group has URLs queued or handed out (a URL pushed now ends after them).
    pub(super) fn busy(&self, key: &str) -> bool {
        self.groups
            .get(key)
            .is_some_and(|group| group.len > 0 || group.active > 0)
    }

    /// URLs queued in `key`'s group.
    pub(super) fn queued_in(&self, key: &str) -> usize {
        self.groups.get(key).map_or(0, |group| group.len)
    }

    /// Groups with a URL queued or handed out.
    pub(super) fn groups(&self) -> usize {
        self.groups.len()
    }

    /// URLs handed out whose jobs have not ended.
    pub(super) fn active(&self) -> usize {
        self.active
    }

    /// The cap on one group's queued URLs.
    pub(super) fn max_per_group(&self) -> usize {
        self.max_per_group
    }

    /// The bytes queuing `url_len` bytes in `group` at `priority` would add.
    fn cost(&self, group: &str, priority: i32, url_len: usize) -> usize {
        let url = url_len + URL_OVERHEAD;
        match self.groups.get(group) {
            None => url + group.len() + GROUP_OVERHEAD + BAND_OVERHEAD,
            Some(g) if g.bands.iter().any(|b| b.priority == priority) => url,
            Some(_) => url + BAND_OVERHEAD,
        }
    }

    /// Queues `url` behind its group's others of the same priority while the queues hold at
    /// most `limit` bytes (the budget less what waits elsewhere, or more for a job's links and
    /// a retry: see `Frontier`).
    pub(super) fn push(
        &mut self,
        group: &str,
        priority: i32,
        url: Box<str>,
        limit: usize,
        now: Instant,
    ) -> Result<(), Refused> {
        if self
            .groups
            .get(group)
            .is_some_and(|g| g.len >= self.max_per_group)
        {
            return Err(Refused::GroupFull);
        }
        let cost = self.cost(group, priority, url.len());
        if self.bytes.saturating_add(cost) > limit {
            // What it takes in an empty frontier: its text and slot, its group's and band's
            // bookkeeping, and the queue's fixed part.
            let alone = FIXED_OVERHEAD.saturating_add(
                url.len() + URL_OVERHEAD + group.len() + GROUP_OVERHEAD + BAND_OVERHEAD,
            );
            return Err(Refused::Full {
                alone: alone > self.max_bytes,
                bytes: alone,
            });
        }
        let key = match self.groups.get_key_value(group) {
            Some((key, _)) => key.clone(),
            None => {
                let key: Key = Arc::from(group);
                self.groups.insert(
                    key.clone(),
                    Group {
                        bands: Vec::with_capacity(1),
                        len: 0,
                        active: 0,
                        phase: Phase::Idle,
                        stalls: 0,
                        head_since: now,
                    },
                );
                key
            }
        };
        self.bytes += cost;
        self.urls += 1;
        let concurrency = self.concurrency;
        let Some(g) = self.groups.get_mut(&key) else {
            return Ok(());
        };
        if g.len == 0 {
            g.head_since = now;
        }
        let at = g.bands.partition_point(|b| b.priority > priority);
        match g.bands.get_mut(at) {
            Some(band) if band.priority == priority => band.urls.push_back(url),
            _ => g.bands.insert(
                at,
                Band {
                    priority,
                    urls: VecDeque::from([url]),
                },
            ),
        }
        g.len += 1;
        if g.phase == Phase::Idle && g.active < concurrency {
            g.phase = Phase::ToAsk;
            self.to_ask.push_back(key);
        }
        Ok(())
    }

    /// Groups whose time came are moved on: ready, or to be asked.
    pub(super) fn wake(&mut self, now: Instant) {
        while let Some(Reverse((at, _))) = self.timers.peek() {
            if *at > now {
                break;
            }
            let Some(Reverse((_, key))) = self.timers.pop() else {
                break;
            };
            let Some(g) = self.groups.get_mut(&key) else {
                continue;
            };
            match g.phase {
                Phase::Waiting => {
                    g.phase = Phase::Ready;
                    self.ready.push_back(key);
                }
                Phase::AskAt => {
                    g.phase = Phase::ToAsk;
                    self.to_ask.push_back(key);
                }
                _ => {}
            }
        }
        shrink_heap(&mut self.timers);
    }

    /// When the earliest group told a time is due.
    pub(super) fn next_wake(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((at, _))| *at)
    }

    /// The next URL of the next ready group (round robin), highest priority first. `keep`
    /// turns a URL's text into what is handed out, or drops it (`None`: disallowed); a group's
    /// turn goes to its next URL then.
    pub(super) fn pop_ready<T>(
        &mut self,
        now: Instant,
        mut keep: impl FnMut(&str) -> Option<T>,
    ) -> Option<HandedOut<T>> {
        while let Some(key) = self.ready.pop_front() {
            shrink_deque(&mut self.ready);
            let Some(g) = self.groups.get_mut(&key) else {
                continue;
            };
            while let Some((priority, url, band_gone)) = g.pop() {
                // The next one is first in line from now.
                let waited = now.saturating_duration_since(g.head_since);
                g.head_since = now;
                self.urls -= 1;
                self.bytes = self.bytes.saturating_sub(url.len() + URL_OVERHEAD);
                if band_gone {
                    self.bytes = self.bytes.saturating_sub(BAND_OVERHEAD);
                }
                let Some(item) = keep(&url) else { continue };
                g.active += 1;
                self.active += 1;
                g.stalls = 0;
                g.phase = if g.len == 0 || g.active >= self.concurrency {
                    Phase::Idle
                } else {
                    // Another place is free: asked again once this one has had time to start.
                    self.timers
                        .push(Reverse((later(now, self.min_delay), key.clone())));
                    Phase::AskAt
                };
                return Some(HandedOut {
                    key,
                    item,
                    priority,
                    waited,
                });
            }
            // Every URL it had was dropped.
            g.phase = Phase::Idle;
            self.forget_if_done(&key);
        }
        None
    }

    /// The next group to ask, and the text of its first URL (the gate asks by origin).
    pub(super) fn next_to_ask(&mut self) -> Option<(Key, String)> {
        while let Some(key) = self.to_ask.pop_front() {
            shrink_deque(&mut self.to_ask);
            let Some(g) = self.groups.get_mut(&key) else {
                continue;
            };
            let Some(head) = g.bands.first().and_then(|b| b.urls.front()) else {
                g.phase = Phase::Idle;
                continue;
            };
            let head = head.to_string();
            g.phase = Phase::Asking;
            return Some((key, head));
        }
        None
    }

    /// What the gate answered for a group being asked.
    pub(super) fn answer(&mut self, key: &Key, answer: Answer, now: Instant) {
        let Some(g) = self.groups.get_mut(key) else {
            return;
        };
        if g.phase != Phase::Asking {
            return;
        }
        match answer {
            Answer::In(wait) if wait.is_zero() => {
                g.stalls = 0;
                g.phase = Phase::Ready;
                self.ready.push_back(key.clone());
            }
            Answer::In(wait) => {
                g.stalls = 0;
                g.phase = Phase::Waiting;
                self.timers.push(Reverse((later(now, wait), key.clone())));
            }
            Answer::WhenOneEnds => {
                // A request of the group is in flight that no job of ours holds (its job ended
                // before its body did, or it came from elsewhere): asked again, less often
                // each time, since nothing will say when it ends.
                let wait = (Duration::from_millis(10) * (1u32 << g.stalls.min(7))).min(MAX_STALL);
                g.stalls = g.stalls.saturating_add(1);
                g.phase = Phase::AskAt;
                self.timers.push(Reverse((later(now, wait), key.clone())));
            }
        }
    }

    /// A group's ask was given up (its `next` was dropped): asked again first.
    pub(super) fn ask_abandoned(&mut self, key: &Key) {
        if let Some(g) = self.groups.get_mut(key)
            && g.phase == Phase::Asking
        {
            g.phase = Phase::ToAsk;
            self.to_ask.push_front(key.clone());
        }
    }

    /// A job handed out has ended: its group has a place again, and is asked when it can go.
    pub(super) fn job_ended(&mut self, key: &Key, now: Instant) {
        let Some(g) = self.groups.get_mut(key) else {
            return;
        };
        // Every place was taken: its first URL could not go before now, and what it waits
        // from here is the politeness (`Job::waited`).
        if g.len > 0 && g.active >= self.concurrency {
            g.head_since = g.head_since.max(now);
        }
        g.active = g.active.saturating_sub(1);
        self.active = self.active.saturating_sub(1);
        if g.phase == Phase::Idle {
            if g.len > 0 {
                g.phase = Phase::ToAsk;
                self.to_ask.push_back(key.clone());
            } else {
                self.forget_if_done(key);
            }
        }
    }

    /// Drops every URL queued (the crawl was stopped), each given to `each` (a group's in its
    /// order): how many. Groups with jobs handed out stay, idle and empty, until those end.
    pub(super) fn drain(&mut self, mut each: impl FnMut(Box<str>)) -> usize {
        let dropped = self.urls;
        for group in self.groups.values_mut() {
            for band in std::mem::take(&mut group.bands) {
                band.urls.into_iter().for_each(&mut each);
            }
        }
        self.groups.retain(|_, g| g.active > 0);
        for g in self.groups.values_mut() {
            g.bands = Vec::new();
            g.len = 0;
            g.phase = Phase::Idle;
        }
        self.ready = VecDeque::new();
        self.to_ask = VecDeque::new();
        self.timers = BinaryHeap::new();
        self.urls = 0;
        self.bytes = FIXED_OVERHEAD
            + self
                .groups
                .keys()
                .map(|key| key.len() + GROUP_OVERHEAD)
                .sum::<usize>();
        dropped
    }

    /// Drops an idle group with nothing queued and nothing handed out.
    fn forget_if_done(&mut self, key: &Key) {
        let done = self
            .groups
            .get(key)
            .is_some_and(|g| g.len == 0 && g.active == 0 && g.phase == Phase::Idle);
        if done && self.groups.remove(key).is_some() {
            self.bytes = self.bytes.saturating_sub(key.len() + GROUP_OVERHEAD);
            if self.groups.capacity() > 4 * self.groups.len() + 64 {
                self.groups.shrink_to(self.groups.len());
            }
        }
    }
}

impl Group {
    /// Takes the first URL of the highest band, with its priority and whether its band, emptied,
    /// went.
    fn pop(&mut self) -> Option<(i32, Box<str>, bool)> {
        let band = self.bands.first_mut()?;
        let url = band.urls.pop_front()?;
        let priority = band.priority;
        self.len -= 1;
        if band.urls.is_empty() {
            self.bands.remove(0);
            return Some((priority, url, true));
        } else if band.urls.capacity() > 3 * band.urls.len() + 4 {
            // Spare room kept under two slots a URL (charged in URL_OVERHEAD), amortised: a
            // shrink copies the band, and comes once a third of it has gone.
            let len = band.urls.len();
            band.urls.shrink_to(2 * len);
        }
        Some((priority, url, false))
    }
}

/// `now + wait`, saturating far in the future.
fn later(now: Instant, wait: Duration) -> Instant {
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(86_400 * 365))
}

/// A list at over four times the room its entries need gives some back (amortised: it halves
/// at most as often as it empties by half).
fn shrink_deque<T>(list: &mut VecDeque<T>) {
    if list.capacity() > 4 * list.len() + 64 {
        list.shrink_to(2 * list.len());
    }
}

fn shrink_heap<T: Ord>(heap: &mut BinaryHeap<T>) {
    if heap.capacity() > 4 * heap.len() + 64 {
        heap.shrink_to(2 * heap.len());
    }
}
