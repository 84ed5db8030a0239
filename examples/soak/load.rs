//! The load: the tasks that each hold one connection, their tallies, and the sampler that
//! watches the server while they run.

use super::*;

#[derive(Default, Clone)]
pub(crate) struct Tally {
    pub(crate) requests: u64,
    pub(crate) ok: u64,
    pub(crate) client_4xx: u64,
    pub(crate) server_5xx: u64,
    /// Another status than the expected one (not 4xx or 5xx), or a wrong body.
    pub(crate) other: u64,
    pub(crate) transport: u64,
    /// Latency of every answer, in microseconds.
    pub(crate) micros: Vec<u32>,
}

impl Tally {
    pub(crate) fn add(&mut self, o: &Tally) {
        self.requests += o.requests;
        self.ok += o.ok;
        self.client_4xx += o.client_4xx;
        self.server_5xx += o.server_5xx;
        self.other += o.other;
        self.transport += o.transport;
        self.micros.extend_from_slice(&o.micros);
    }

    pub(crate) fn errors(&self) -> u64 {
        self.client_4xx + self.server_5xx + self.other + self.transport
    }
}

pub(crate) struct Report {
    pub(crate) tallies: Vec<Tally>,
    pub(crate) connected: bool,
    /// How long opening the connection took, retries included.
    pub(crate) connect_micros: u32,
    /// Connections opened after the first: each one followed an error or a close.
    pub(crate) reconnects: u64,
    /// Answers that closed the connection (`Connection: close`, or a body to the end).
    pub(crate) server_closes: u64,
    /// (seconds into the load, what went wrong)
    pub(crate) samples: Vec<(f64, String)>,
    pub(crate) written: Written,
}

/// What all tasks share while they run.
pub(crate) struct Shared {
    pub(crate) world: World,
    pub(crate) gate: tokio::sync::Barrier,
    pub(crate) start: std::sync::OnceLock<Instant>,
    pub(crate) duration: Duration,
    /// Answers completed in each second of the run.
    pub(crate) per_second: Vec<AtomicU64>,
    pub(crate) errors: AtomicU64,
}

pub(crate) async fn worker(id: usize, shared: Arc<Shared>) -> Report {
    let w = &shared.world;
    let mut conn = Conn { port: w.port, stream: None, opened: 0 };
    let mut report = Report {
        tallies: vec![Tally::default(); KINDS.len()],
        connected: false,
        connect_micros: 0,
        reconnects: 0,
        server_closes: 0,
        samples: Vec::new(),
        written: Written::default(),
    };
    let connecting = Instant::now();
    for attempt in 0..3 {
        match conn.open().await {
            Ok(()) => {
                report.connected = true;
                report.connect_micros = u32::try_from(connecting.elapsed().as_micros()).unwrap_or(u32::MAX);
                break;
            }
            Err(e) => {
                if report.samples.len() < SAMPLES_PER_TASK {
                    report.samples.push((0.0, format!("task {id}: connect (attempt {}): {e}", attempt + 1)));
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
    // Everyone connected (or gave up) before anyone sends.
    shared.gate.wait().await;
    let start = *shared.start.get_or_init(Instant::now);
    let deadline = start + shared.duration;
    let mut task = Task {
        id,
        rng: StdRng::seed_from_u64(0x50A4 + id as u64),
        n: 0,
        customers: Vec::new(),
        products: Vec::new(),
        imported: Vec::new(),
        shippable: Vec::new(),
        session: None,
        written: Written::default(),
    };
    while Instant::now() < deadline {
        let request = task.next(w);
        let bytes = request.bytes(w);
        let reopening = conn.stream.is_none() && conn.opened > 0;
        let sent = Instant::now();
        let result = tokio::time::timeout(REQUEST_TIMEOUT, conn.exchange(&bytes)).await;
        let elapsed = sent.elapsed();
        if reopening && conn.stream.is_some() {
            report.reconnects += 1;
        }
        let tally = &mut report.tallies[request.kind.index()];
        tally.requests += 1;
        let slot = (start.elapsed().as_secs() as usize).min(shared.per_second.len() - 1);
        shared.per_second[slot].fetch_add(1, Ordering::Relaxed);
        let problem = match result {
            Err(_) => {
                conn.stream = None;
                tally.transport += 1;
                Some(format!("no answer within {} s", REQUEST_TIMEOUT.as_secs()))
            }
            Ok(Err(e)) => {
                conn.stream = None;
                tally.transport += 1;
                Some(e)
            }
            Ok(Ok(answer)) => {
                tally.micros.push(u32::try_from(elapsed.as_micros()).unwrap_or(u32::MAX));
                if !answer.keep_alive {
                    conn.stream = None;
                    report.server_closes += 1;
                }
                let body = String::from_utf8_lossy(&answer.body);
                if answer.status == request.expect {
                    match task.learn(&request.then, &answer.body) {
                        Ok(()) => {
                            tally.ok += 1;
                            None
                        }
                        Err(e) => {
                            tally.other += 1;
                            Some(format!("{} (status {}): {e}", answer.status, request.expect))
                        }
                    }
                } else {
                    match answer.status {
                        400..=499 => tally.client_4xx += 1,
                        500..=599 => tally.server_5xx += 1,
                        _ => tally.other += 1,
                    }
                    Some(format!("{} (expected {}): {}", answer.status, request.expect, prefix(&body, 300)))
                }
            }
        };
        if let Some(problem) = problem {
            task.forget(&request.then);
            shared.errors.fetch_add(1, Ordering::Relaxed);
            if report.samples.len() < SAMPLES_PER_TASK {
                let at = start.elapsed().as_secs_f64();
                let body =
                    request.body.as_deref().map(|b| format!(" body {}", prefix(b, 200))).unwrap_or_default();
                report.samples.push((
                    at,
                    format!("task {id} at {at:.1} s: {} {}{body} -> {problem}", request.method, request.path),
                ));
            }
        }
    }
    report.written = task.written;
    report
}

/// What the sampler saw of the server while the load ran.
#[derive(Default)]
pub(crate) struct Sampled {
    pub(crate) rss_max_kib: u64,
    pub(crate) sockets_min: u64,
    pub(crate) sockets_max: u64,
}

/// Every second until `stop`: the server's RSS and sockets, and a line of progress every 10 s.
pub(crate) fn sampler(pid: u32, shared: Arc<Shared>, stop: Arc<AtomicBool>) -> Sampled {
    let mut s = Sampled { sockets_min: u64::MAX, ..Sampled::default() };
    let mut last_print = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(1000));
        let Some(start) = shared.start.get() else { continue };
        if start.elapsed() > shared.duration {
            continue;
        }
        s.rss_max_kib = s.rss_max_kib.max(proc_status_kib(&pid.to_string(), "VmRSS:"));
        let open = sockets(pid);
        s.sockets_min = s.sockets_min.min(open);
        s.sockets_max = s.sockets_max.max(open);
        if last_print.elapsed() >= Duration::from_secs(10) {
            last_print = Instant::now();
            let done: u64 = shared.per_second.iter().map(|c| c.load(Ordering::Relaxed)).sum();
            eprintln!(
                "soak: {:>3.0} s: {done} requests, {} errors, server {} sockets, RSS {} MiB",
                start.elapsed().as_secs_f64(),
                shared.errors.load(Ordering::Relaxed),
                open,
                proc_status_kib(&pid.to_string(), "VmRSS:") / 1024
            );
        }
    }
    if s.sockets_min == u64::MAX {
        s.sockets_min = 0;
    }
    s
}
