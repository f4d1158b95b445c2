// nfs3top: a live, full-screen view of a running nfs3d -- the busiest
// clients, exports (or users) and procedures over the last interval, with
// their rates and p50/p99 latency. Reads the same /metrics page as nfs3stat.
//
//   nfs3top [--server TARGET] [-d SECONDS]     interactive; q quits
//   nfs3top --batch -n 3 -d 1                  three frames to stdout
// Keys: c, e, b, l sort by calls, errors, bytes, p99; u shows users instead
// of exports; + and - lengthen or shorten the interval; q quits.
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/command_line.h"
#include "common/version.h"
#include "stats/metrics_server.h"
#include "stats/prom_text.h"
#include "tools/nfs3top/screen.h"

namespace nfs3d::nfs3top {
namespace {

struct Options {
  std::string server;
  std::string state_dir = "/var/lib/nfs3d";
  double delay = 2;
  int frames = -1;
  bool batch = false;
  bool help = false;
  bool version = false;
};

constexpr char kSynopsis[] =
    "nfs3top [options]\n"
    "Live view of a running nfs3d: busiest clients, exports, users and procedures\n"
    "with rates and p50/p99. Keys: c e b l (sort by calls, errors, bytes, p99),\n"
    "u (users/exports), + - (interval), q (quit). See nfs3top(8).";

std::vector<cli::Option> OptionTable(Options* o) {
  return {
      {"server", 's', "TARGET", "unix:SOCKET, or HOST:PORT of the [metrics] endpoint",
       cli::Store(&o->server)},
      {"state-dir", 0, "DIR", "nfs3d's state directory (default /var/lib/nfs3d)",
       cli::Store(&o->state_dir)},
      {"delay", 'd', "SECONDS", "refresh interval (default 2)", cli::StoreDouble(&o->delay, 0.1)},
      {"batch", 'b', "", "print frames to stdout, no terminal control", cli::SetTrue(&o->batch)},
      {"frames", 'n', "N", "stop after N frames", cli::StoreInt(&o->frames, 1, 1 << 30)},
      {"version", 0, "", "print the version and build options", cli::SetTrue(&o->version)},
      {"help", 'h', "", "print this help", cli::SetTrue(&o->help)},
  };
}

bool Fetch(const std::string& server, Sample* out, std::string* error) {
  absl::StatusOr<std::string> page = stats::HttpGet(server, "/metrics");
  if (!page.ok()) {
    *error = std::string(page.status().message());
    return false;
  }
  absl::StatusOr<std::vector<stats::Sample>> samples = stats::ParsePrometheusText(*page);
  if (!samples.ok()) {
    *error = std::string(samples.status().message());
    return false;
  }
  out->view = nfs3stat::BuildView(*samples);
  out->clients = nfs3stat::BuildOrigins(*samples, "client");
  out->exports = nfs3stat::BuildOrigins(*samples, "export");
  out->users = nfs3stat::BuildOrigins(*samples, "user");
  // Served on the control socket only (and by an nfs3d that knows it).
  absl::StatusOr<std::string> connections = stats::HttpGet(server, "/connections");
  out->connections_known = connections.ok();
  out->connections = connections.ok() ? stats::ParseConnections(*connections)
                                      : std::vector<stats::ConnectionRow>{};
  return true;
}

// Raw keys, alternate screen, hidden cursor; all undone on exit.
class Terminal {
 public:
  Terminal() {
    if (tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios raw = saved_;
      raw.c_lflag &= ~(ICANON | ECHO);
      raw.c_cc[VMIN] = 0;
      raw.c_cc[VTIME] = 0;
      tcsetattr(STDIN_FILENO, TCSANOW, &raw);
      restore_ = true;
    }
    std::fputs("\x1b[?1049h\x1b[?25l", stdout);
  }
  ~Terminal() {
    std::fputs("\x1b[?25h\x1b[?1049l", stdout);
    std::fflush(stdout);
    if (restore_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_);
  }
  static void Size(int* rows, int* columns) {
    winsize ws{};
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) {
      *rows = ws.ws_row;
      *columns = ws.ws_col;
    }
  }
  void Draw(const std::string& frame) {
    std::string out = "\x1b[H";
    size_t start = 0;
    while (start < frame.size()) {
      size_t end = frame.find('\n', start);
      if (end == std::string::npos) end = frame.size();
      out.append(frame, start, end - start).append("\x1b[K\r\n");
      start = end + 1;
    }
    out += "\x1b[J";
    std::fputs(out.c_str(), stdout);
    std::fflush(stdout);
  }
  // A key pressed within `seconds`, or 0.
  static int Key(double seconds) {
    pollfd p{STDIN_FILENO, POLLIN, 0};
    if (poll(&p, 1, static_cast<int>(seconds * 1000)) <= 0) return 0;
    char c = 0;
    return read(STDIN_FILENO, &c, 1) == 1 ? c : 0;
  }

 private:
  termios saved_{};
  bool restore_ = false;
};

std::string Clock() {
  char text[16];
  const time_t now = time(nullptr);
  tm local{};
  localtime_r(&now, &local);
  strftime(text, sizeof(text), "%H:%M:%S", &local);
  return text;
}

// Applies one key; false: quit.
bool OnKey(int key, Frame* f, double* delay) {
  switch (key) {
    case 'q':
    case 'Q':
      return false;
    case 'c':
      f->sort = nfs3stat::SortKey::kCalls;
      break;
    case 'e':
      f->sort = nfs3stat::SortKey::kErrors;
      break;
    case 'b':
      f->sort = nfs3stat::SortKey::kBytes;
      break;
    case 'l':
      f->sort = nfs3stat::SortKey::kLatency;
      break;
    case 'u':
      f->show_users = !f->show_users;
      f->show_connections = false;
      break;
    case 't':
      f->show_connections = !f->show_connections;
      break;
    case '+':
      *delay = std::min(*delay * 2, 60.0);
      break;
    case '-':
      *delay = std::max(*delay / 2, 0.25);
      break;
    default:
      break;
  }
  return true;
}

volatile sig_atomic_t stop = 0;

int Run(const Options& o) {
  Frame frame;
  frame.source = o.server;
  double delay = o.delay;
  Sample previous;
  std::string error;
  if (!Fetch(o.server, &previous, &error)) {
    std::fprintf(stderr, "nfs3top: %s: %s\n", o.server.c_str(), error.c_str());
    return 1;
  }
  auto last = std::chrono::steady_clock::now();
  std::optional<Terminal> term;
  if (!o.batch) term.emplace();
  Sample shown = previous;          // first frame: totals since start
  if (!term) frame.columns = 1000;  // batch: nothing to fit
  for (int n = 0; !stop && (o.frames < 0 || n < o.frames); ++n) {
    frame.clock = Clock();
    frame.delay = delay;
    if (term) {
      Terminal::Size(&frame.rows, &frame.columns);
      term->Draw(Render(shown, frame));
    } else {
      std::fputs(Render(shown, frame).c_str(), stdout);
      std::fputs("\n", stdout);
      std::fflush(stdout);
    }
    if (o.frames >= 0 && n + 1 >= o.frames) break;
    // Keys redraw at once (with the last interval's figures); the interval
    // runs on until it is due.
    auto due = last + std::chrono::duration<double>(delay);
    bool redraw = false;
    while (!stop && !redraw) {
      const double left =
          std::chrono::duration<double>(due - std::chrono::steady_clock::now()).count();
      if (left <= 0) break;
      if (!term) {
        std::this_thread::sleep_for(std::chrono::duration<double>(left));
        break;
      }
      const int key = Terminal::Key(left);
      if (key == 0) continue;
      if (!OnKey(key, &frame, &delay)) return 0;
      redraw = true;
    }
    if (redraw) {
      --n;
      continue;
    }
    Sample current;
    if (!Fetch(o.server, &current, &error)) {
      term.reset();
      std::fprintf(stderr, "nfs3top: %s: %s\n", o.server.c_str(), error.c_str());
      return 1;
    }
    const auto now = std::chrono::steady_clock::now();
    frame.seconds = std::chrono::duration<double>(now - last).count();
    shown = Subtract(current, previous);
    previous = std::move(current);
    last = now;
  }
  return 0;
}

}  // namespace
}  // namespace nfs3d::nfs3top

int main(int argc, char** argv) {
  using namespace nfs3d::nfs3top;
  Options options;
  const std::vector<nfs3d::cli::Option> table = OptionTable(&options);
  if (std::optional<int> done =
          nfs3d::cli::ParseToolOptions("nfs3top", argc, argv, kSynopsis, table, options.help,
                                       options.version, nfs3d::VersionText("nfs3top"))) {
    return *done;
  }
  if (options.server.empty()) options.server = nfs3d::stats::ControlSocketTarget(options.state_dir);
  signal(SIGINT, [](int) { stop = 1; });
  signal(SIGTERM, [](int) { stop = 1; });
  return Run(options);
}
