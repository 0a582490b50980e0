//! Fleet mode: several crawler processes behave toward each site as one polite crawler.
//!
//! ```text
//! cargo run --example fleet                              # Redis at redis://127.0.0.1:6379/
//! cargo run --example fleet -- redis://10.0.0.5:6379/0   # another Redis
//! ```
//!
//! Two members of a fleet (in a real deployment, two processes or machines; here two clients
//! with their own connections, caches and pacing) crawl a demo site served in-process. With
//! Redis reachable they fetch robots.txt once between them and space their requests as one
//! crawler: the site sees one request every 0.5 s in all. Without Redis, each falls back to
//! pacing alone with the interval multiplied by the fleet size, and says so.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use polite_robots::client::{RedisFleet, RobotsError, RobotsMiddleware};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt().with_target(false).init();
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "redis://127.0.0.1:6379/".to_string());
    let (site, log) = demo_site().await;
    println!("demo site at {}; fleet on {url}\n", site.uri());

    // One line of configuration per member: the same Redis, the fleet's size.
    let members = (0..2)
        .map(|_| {
            let fleet = RedisFleet::new(&url)?.prefix("fleet-example");
            RobotsMiddleware::builder("FleetExample/0.1")
                .fleet(&fleet)
                .fleet_size(2)
                .min_delay(Duration::from_millis(500))
                .build_client()
                .map_err(Into::into)
        })
        .collect::<Result<Vec<_>, Box<dyn std::error::Error>>>()?;

    let started = Instant::now();
    let mut tasks = Vec::new();
    for (m, client) in members.into_iter().enumerate() {
        let base = site.uri();
        tasks.push(tokio::spawn(async move {
            for page in ["/a", "/b", "/private/c", "/d"] {
                let url = format!("{base}{page}?member={m}");
                match client.get(&url).send().await {
                    Ok(response) => println!(
                        "{:5.2}s  member {m}  {}  {page}",
                        started.elapsed().as_secs_f32(),
                        response.status()
                    ),
                    Err(reqwest_middleware::Error::Middleware(e)) if e.is::<RobotsError>() => {
                        println!(
                            "{:5.2}s  member {m}  not fetched  {page}: {e}",
                            started.elapsed().as_secs_f32()
                        )
                    }
                    Err(e) => println!("member {m}: {e}"),
                }
            }
        }));
    }
    for task in tasks {
        task.await?;
    }
    let log = log.lock().map_err(|_| "log poisoned")?.clone();
    let robots = log.iter().filter(|(path, _)| path == "/robots.txt").count();
    let mut starts: Vec<Instant> = log
        .iter()
        .filter(|(path, _)| path != "/robots.txt")
        .map(|(_, at)| *at)
        .collect();
    starts.sort();
    let closest = starts
        .windows(2)
        .map(|w| w[1] - w[0])
        .min()
        .unwrap_or_default();
    println!(
        "\nthe site saw robots.txt fetched {robots} time(s), {} page requests, the closest two {} ms apart",
        starts.len(),
        closest.as_millis()
    );
    Ok(())
}

/// A site whose robots.txt disallows /private, logging what it receives.
async fn demo_site() -> (wiremock::MockServer, Arc<Mutex<Vec<(String, Instant)>>>) {
    use wiremock::{Mock, MockServer, Request, ResponseTemplate, matchers::path_regex};
    let server = MockServer::start().await;
    let log: Arc<Mutex<Vec<(String, Instant)>>> = Arc::default();
    let seen = log.clone();
    Mock::given(path_regex(".*"))
        .respond_with(move |request: &Request| {
            let path = request.url.path().to_string();
            if let Ok(mut seen) = seen.lock() {
                seen.push((path.clone(), Instant::now()));
            }
            if path == "/robots.txt" {
                ResponseTemplate::new(200).set_body_string("User-agent: *\nDisallow: /private\n")
            } else {
                ResponseTemplate::new(200).set_body_string("page")
            }
        })
        .mount(&server)
        .await;
    (server, log)
}
