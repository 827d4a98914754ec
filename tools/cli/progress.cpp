// weightstream CLI — progress bar (see progress.h).
#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "text_format.h"

namespace wscli {

std::string progress_line(const std::string& label, uint64_t done, uint64_t total, double seconds) {
  constexpr int kBarWidth = 24;
  const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int filled = static_cast<int>(fraction * kBarWidth);
  std::string bar(static_cast<size_t>(filled), '#');
  bar.append(static_cast<size_t>(kBarWidth - filled), ' ');
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds / 1e6 : 0.0;
  char tail[64];
  snprintf(tail, sizeof tail, "  %3d%%  ", static_cast<int>(fraction * 100));
  char speed[32];
  snprintf(speed, sizeof speed, "  %.1f MB/s", rate);
  return display_text(label) + "  [" + bar + "]" + tail + human_bytes(done) + " / " +
         human_bytes(total) + speed;
}

namespace {
// The bar must fit on one terminal line or \r cannot redraw it: show the file name, cut from the
// left when long.
std::string short_label(const std::string& path) {
  constexpr size_t kMax = 32;
  const size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.size() > kMax) {
    size_t cut = name.size() - (kMax - 3);
    while (cut < name.size() && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) ++cut;
    name = "..." + name.substr(cut);
  }
  return name;
}
}  // namespace

Progress::Progress(const std::string& label, bool size_known, uint64_t total, bool allowed)
    : label_(short_label(label)), total_(total) {
  active_ = allowed && size_known && total > kProgressMinBytes && isatty(STDERR_FILENO);
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

Progress::~Progress() { finish(); }

void Progress::update(uint64_t done) {
  if (!active_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100) && done < total_) return;
  last_draw_ = now;
  draw(done);
}

void Progress::draw(uint64_t done) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  // \r returns to column 0 and \x1b[K clears what a longer previous line left behind.
  fprintf(stderr, "\r%s\x1b[K", progress_line(label_, done, total_, seconds).c_str());
  fflush(stderr);
}

void Progress::finish() {
  if (!active_) return;
  fprintf(stderr, "\r\x1b[K");
  fflush(stderr);
  active_ = false;
}

}  // namespace wscli
