// ws-differential-ggml: weightstream's GGUF reader against ggml's gguf_init_from_file on mutants of
// a GGUF corpus (tests/differential/README.md). Every file both readers see either gets the same
// reading from both (accepted with the same tensor count, KV count, alignment, data start and every
// tensor's offset and size, or rejected by both), or falls in one of the documented classes of
// deliberate differences (disagreement_classes.h). Anything else is a failure: the mutant is
// written out as a regression file and the exit status is 1.
//
//   ws-differential-ggml [--ggml LIB] [--mutants N] [--seed S] [--jobs J] [--out DIR] [--examples K] SEED...
//       (--examples K: also keep the first K mutants of every class, per job, in DIR/examples/CLASS)
//   ws-differential-ggml [--ggml LIB] --replay FILE...     each file once: verdicts and class
//   ws-differential-ggml [--ggml LIB] --seed S --index I [--out DIR] SEED...   make mutant I again
//   ws-differential-ggml --seed S --mutants N --list SEED...   what each mutant is (no reading)
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "disagreement_classes.h"
#include "gguf_mutator.h"
#include "gguf_seed_reader.h"

namespace {

using namespace wsdiff;

struct Options {
  std::string ggml = std::string(WS_SOURCE_DIR "/") + wsbench::kGgmlDefaultRelPath;
  uint64_t mutants = 1000, seed = 1, jobs = 2, examples = 0;
  int64_t index = -1;
  std::string out = "build/differential";
  bool replay = false, list = false;
  std::vector<std::string> paths;
};

[[noreturn]] void usage() {
  fprintf(stderr,
          "usage: ws-differential-ggml [--ggml LIB] [--mutants N] [--seed S] [--jobs J] [--out DIR] [--examples K] SEED...\n"
          "       ws-differential-ggml [--ggml LIB] --replay FILE...\n"
          "       ws-differential-ggml [--ggml LIB] --seed S --index I [--out DIR] SEED...\n"
          "       ws-differential-ggml --seed S --mutants N --list SEED...\n");
  exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "--ggml") o.ggml = value();
    else if (a == "--mutants") o.mutants = strtoull(value().c_str(), nullptr, 10);
    else if (a == "--seed") o.seed = strtoull(value().c_str(), nullptr, 10);
    else if (a == "--jobs") o.jobs = strtoull(value().c_str(), nullptr, 10);
    else if (a == "--examples") o.examples = strtoull(value().c_str(), nullptr, 10);
    else if (a == "--index") o.index = strtoll(value().c_str(), nullptr, 10);
    else if (a == "--out") o.out = value();
    else if (a == "--replay") o.replay = true;
    else if (a == "--list") o.list = true;
    else if (a.rfind("--", 0) == 0) usage();
    else o.paths.push_back(a);
  }
  if (o.paths.empty() || o.jobs == 0) usage();
  return o;
}

bool write_file(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary);
  f.write(bytes.data(), std::streamsize(bytes.size()));
  return bool(f);
}

// One file through both readers.
struct Judged {
  Verdict verdict = Verdict::AgreeReject;
  int cls = -1;  // for Disagree
  const char* ggml = "rejects";  // ggml's verdict: accepts, rejects, crashed
  std::string difference;
};

Judged judge(const GgmlReader& ggml, const std::string& bytes, const std::string& path) {
  Judged j;
  if (!write_file(path, bytes)) {
    fprintf(stderr, "ws-differential-ggml: cannot write %s\n", path.c_str());
    exit(2);
  }
  GgmlReading g = ggml.read(path);
  WsReading w = read_with_weightstream(bytes);
  wsgguf::Spec spec;
  bool described = read_seed(bytes, &spec);
  Outcome o{bytes, w, g, described, spec};
  j.verdict = compare(o);
  j.ggml = g.crashed ? "crashed" : g.accepted ? "accepts" : "rejects";
  if (j.verdict == Verdict::Disagree) {
    j.cls = classify(o);
    j.difference = difference(o);
    if (!g.log.empty() && (!g.accepted || g.crashed)) {
      std::string log = g.log.substr(0, 400);
      while (!log.empty() && log.back() == '\n') log.pop_back();
      j.difference += "\n  ggml says: " + log;
    }
  }
  return j;
}

// A worker's tally, written to a file for the parent to add up.
struct Tally {
  uint64_t files = 0, agree_accept = 0, agree_reject = 0, unclassified = 0;
  std::vector<uint64_t> per_class = std::vector<uint64_t>(size_t(class_count()), 0);
};

void save(const Tally& t, const std::string& path) {
  FILE* f = fopen(path.c_str(), "w");
  if (!f) return;
  fprintf(f, "%llu %llu %llu %llu", (unsigned long long)t.files, (unsigned long long)t.agree_accept,
          (unsigned long long)t.agree_reject, (unsigned long long)t.unclassified);
  for (uint64_t c : t.per_class) fprintf(f, " %llu", (unsigned long long)c);
  fprintf(f, "\n");
  fclose(f);
}

bool add_saved(Tally* t, const std::string& path) {
  FILE* f = fopen(path.c_str(), "r");
  if (!f) return false;
  unsigned long long v[4];
  bool ok = fscanf(f, "%llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3]) == 4;
  t->files += v[0], t->agree_accept += v[1], t->agree_reject += v[2], t->unclassified += v[3];
  for (uint64_t& c : t->per_class) {
    unsigned long long x = 0;
    ok = ok && fscanf(f, "%llu", &x) == 1;
    c += x;
  }
  fclose(f);
  return ok;
}

// Items 0..seeds-1 are the seeds as they are, then the mutants; worker w takes every jobs-th.
void run_worker(const Options& o, const GgmlReader& ggml, const std::vector<Seed>& seeds, uint64_t w) {
  Tally t;
  std::string tmp = o.out + "/tmp/worker-" + std::to_string(w) + ".gguf";
  uint64_t total = seeds.size() + o.mutants;
  for (uint64_t item = w; item < total; item += o.jobs) {
    Mutant m;
    if (item < seeds.size()) {
      m.bytes = seeds[item].bytes;
      m.what = seeds[item].name + " (unmutated)";
    } else {
      m = make_mutant(seeds, o.seed, item - seeds.size());
    }
    Judged j = judge(ggml, m.bytes, tmp);
    ++t.files;
    if (j.verdict == Verdict::AgreeAccept) ++t.agree_accept;
    else if (j.verdict == Verdict::AgreeReject) ++t.agree_reject;
    else if (j.cls >= 0) {
      if (++t.per_class[size_t(j.cls)] <= o.examples) {
        std::string dir = o.out + "/examples/" + classes()[j.cls].name;
        std::filesystem::create_directories(dir);
        std::string base = dir + "/item-" + std::to_string(item);
        write_file(base + ".gguf", m.bytes);
        write_file(base + ".txt", m.what + "\n" + j.difference + "\n");
      }
    } else {
      ++t.unclassified;
      std::string base = o.out + "/unclassified/mutant-" + std::to_string(item - std::min<uint64_t>(item, seeds.size()));
      if (item < seeds.size()) base = o.out + "/unclassified/seed-" + std::to_string(item);
      write_file(base + ".gguf", m.bytes);
      write_file(base + ".txt", "campaign seed " + std::to_string(o.seed) + ", item " + std::to_string(item) +
                                    "\n" + m.what + "\n" + j.difference + "\n");
      fprintf(stderr, "UNCLASSIFIED %s.gguf: %s\n  %s\n", base.c_str(), m.what.c_str(), j.difference.c_str());
    }
  }
  save(t, o.out + "/tmp/worker-" + std::to_string(w) + ".tally");
}

int campaign(const Options& o, const GgmlReader& ggml, const std::vector<Seed>& seeds) {
  namespace fs = std::filesystem;
  fs::create_directories(o.out + "/tmp");
  fs::create_directories(o.out + "/unclassified");
  timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  std::vector<pid_t> workers;
  for (uint64_t w = 0; w < o.jobs; ++w) {
    fs::remove(o.out + "/tmp/worker-" + std::to_string(w) + ".tally");
    pid_t pid = fork();
    if (pid == 0) {
      run_worker(o, ggml, seeds, w);
      _exit(0);
    }
    workers.push_back(pid);
  }
  bool workers_ok = true;
  for (pid_t p : workers) {
    int status = 0;
    workers_ok &= waitpid(p, &status, 0) == p && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  Tally t;
  for (uint64_t w = 0; w < o.jobs; ++w)
    workers_ok &= add_saved(&t, o.out + "/tmp/worker-" + std::to_string(w) + ".tally");
  timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = double(t1.tv_sec - t0.tv_sec) + double(t1.tv_nsec - t0.tv_nsec) * 1e-9;

  size_t described = 0;
  for (const Seed& s : seeds) described += s.described;
  printf("differential: %s vs weightstream; campaign seed %llu, %zu seeds (%zu described), %llu mutants, "
         "%llu jobs, %.1f s\n",
         ggml.version().c_str(), (unsigned long long)o.seed, seeds.size(), described,
         (unsigned long long)o.mutants, (unsigned long long)o.jobs, secs);
  printf("  %-26s %9llu\n", "files read", (unsigned long long)t.files);
  printf("  %-26s %9llu\n", "both accept, same reading", (unsigned long long)t.agree_accept);
  printf("  %-26s %9llu\n", "both reject", (unsigned long long)t.agree_reject);
  printf("  disagreements, by class:\n");
  for (int c = 0; c < class_count(); ++c)
    printf("    %-24s %9llu   %s\n", classes()[c].name, (unsigned long long)t.per_class[size_t(c)], classes()[c].rule);
  printf("  %-26s %9llu%s\n", "unclassified", (unsigned long long)t.unclassified,
         t.unclassified ? "   (FAIL: written to " : "");
  if (t.unclassified) printf("    %s/unclassified)\n", o.out.c_str());
  if (!workers_ok || t.files != seeds.size() + o.mutants) {
    fprintf(stderr, "ws-differential-ggml: a worker failed (%llu of %llu files read)\n",
            (unsigned long long)t.files, (unsigned long long)(seeds.size() + o.mutants));
    return 1;
  }
  // A campaign in which the readers never agree on a valid file compares nothing.
  if (t.agree_accept == 0) {
    fprintf(stderr, "ws-differential-ggml: no file was accepted by both readers: wrong ggml library?\n");
    return 1;
  }
  return t.unclassified ? 1 : 0;
}

// Each file once: the verdicts, the class. One line per file (tab-separated: file, verdict, class,
// ggml's verdict) then the details.
int replay(const GgmlReader& ggml, const std::vector<std::string>& files) {
  int unclassified = 0;
  const char* tmpdir = getenv("TMPDIR");
  std::string tmp = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/ws-differential-replay-" +
                    std::to_string(getpid()) + ".gguf";
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    if (!in) {
      fprintf(stderr, "ws-differential-ggml: cannot read %s\n", f.c_str());
      return 2;
    }
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    Judged j = judge(ggml, bytes, tmp);
    const char* v = j.verdict == Verdict::AgreeAccept ? "agree-accept"
                    : j.verdict == Verdict::AgreeReject ? "agree-reject" : "disagree";
    const char* cls = j.verdict != Verdict::Disagree ? "-" : j.cls >= 0 ? classes()[j.cls].name : "UNCLASSIFIED";
    printf("%s\t%s\t%s\t%s\n", f.c_str(), v, cls, j.ggml);
    if (!j.difference.empty()) printf("  %s\n", j.difference.c_str());
    unclassified += j.verdict == Verdict::Disagree && j.cls < 0;
  }
  std::filesystem::remove(tmp);
  return unclassified ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o = parse(argc, argv);
  std::string err;
  if (o.list) {
    std::vector<Seed> seeds = load_seeds(o.paths, &err);
    for (uint64_t i = 0; i < o.mutants && !seeds.empty(); ++i)
      printf("%llu\t%s\n", (unsigned long long)i, make_mutant(seeds, o.seed, i).what.c_str());
    return seeds.empty() ? 2 : 0;
  }
  GgmlReader ggml;
  if (!ggml.load(o.ggml, &err)) {
    fprintf(stderr, "ws-differential-ggml: cannot load ggml from %s: %s\n(npm ci --prefix bench installs it)\n",
            o.ggml.c_str(), err.c_str());
    return 2;
  }
  if (o.replay) return replay(ggml, o.paths);
  std::vector<Seed> seeds = load_seeds(o.paths, &err);
  if (seeds.empty()) {
    fprintf(stderr, "ws-differential-ggml: %s\n", err.c_str());
    return 2;
  }
  if (o.index >= 0) {  // one mutant again, for triage
    Mutant m = make_mutant(seeds, o.seed, uint64_t(o.index));
    std::filesystem::create_directories(o.out);
    std::string path = o.out + "/mutant-" + std::to_string(o.index) + ".gguf";
    printf("%s\n%s\n", path.c_str(), m.what.c_str());
    return write_file(path, m.bytes) ? replay(ggml, {path}) : 2;
  }
  return campaign(o, ggml, seeds);
}
