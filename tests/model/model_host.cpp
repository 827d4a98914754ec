// tests/model — the in-memory host of ws::ModelLoader (see model_host.h).
#include "model_host.h"

#include <stdio.h>

#include <memory>

#include "alloc_counter.h"

namespace modeltest {

Files disk_files(const std::string& dir) {
  return [dir](const std::string& name, Bytes* out) {
    FILE* f = fopen((dir.empty() ? name : dir + "/" + name).c_str(), "rb");
    if (!f) return false;
    out->clear();
    uint8_t buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) out->insert(out->end(), buf, buf + n);
    fclose(f);
    return true;
  };
}

Files memory_files(const std::map<std::string, Bytes>& files) {
  return [files](const std::string& name, Bytes* out) {
    const auto it = files.find(name);
    if (it == files.end()) return false;
    *out = it->second;
    return true;
  };
}

std::string LoadResult::verdict() const {
  if (code == ws::Status::Ok) return "Ok";
  return std::string(ws::status_name(code)) + "@" + std::to_string(offset) + " tensor=" + tensor + " file=" + file;
}

namespace {

uint32_t next_random(uint32_t* s) {
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s;
}

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

// Counts heap calls inside one loader call when asked (the host's own work is not counted).
struct Armed {
  explicit Armed(bool on) : on_(on) {
#ifdef WS_COUNTING_ALLOCATOR
    if (on_) wsalloc::g_armed = true;
#endif
  }
  ~Armed() {
#ifdef WS_COUNTING_ALLOCATOR
    if (on_) wsalloc::g_armed = false;
#endif
  }
  bool on_;
};

bool attempt(const Files& files, ws::ModelEntry entry, const std::string& entry_name, const HostOptions& o,
             const std::vector<std::string>& listing, size_t arena_size, LoadResult* r, size_t* needed,
             const std::function<void(ws::ModelLoader&)>& before_open) {
  *r = LoadResult();
  r->arena_size = arena_size;
  std::vector<uint64_t> arena((arena_size + 7) / 8 + 2);
  ws::ModelLoaderOptions opt;
  opt.mode = o.mode;
  opt.seekable = o.seekable;
  opt.out = o.out;
  opt.read_size = o.read_size;
  opt.out_size = o.out_size;
  opt.pass_stored = o.pass_stored;
  opt.stored_formats = o.stored_formats;
  opt.as_stored = o.as_stored;
  opt.estimate_arena = o.estimate_arena;
  std::unique_ptr<ws::ModelLoader> L(new ws::ModelLoader(arena.data(), arena_size, opt));
  std::map<uint32_t, Bytes> content;      // file -> bytes (loaded on first request)
  std::map<uint32_t, bool> missing;
  std::map<uint32_t, uint64_t> position;  // sequential: where each file continues
  uint32_t seed = o.seed;
#ifdef WS_COUNTING_ALLOCATOR
  const long allocs_before = wsalloc::g_allocs;
#endif
  for (const std::string& name : listing) {
    Armed a(o.count_allocations);
    if (L->add_file(name.data(), name.size()) != ws::Status::Ok) break;
  }
  {
    Armed a(o.count_allocations);
    for (const auto& d : o.sha256)
      if (L->expect_sha256_hex(d.first.data(), d.first.size(), d.second.data(), d.second.size()) != ws::Status::Ok)
        r->violation = "expect_sha256_hex(" + d.first + ") refused";
    if (o.verify_blobs) L->verify_blobs();
    if (before_open) before_open(*L);
    L->open(entry, entry_name.data(), entry_name.size());
  }
  std::map<uint32_t, bool> asked;  // files whose first request came
  // The files' digest states and, for DigestMismatch, the two digests.
  auto digests_of = [&]() {
    char hex[65];
    for (uint32_t f = 0; f < L->file_count(); ++f)
      if (L->file_digest_state(f) != ws::DigestState::None) r->digests[str(L->file_name(f))] = ws::digest_state_name(L->file_digest_state(f));
    const uint32_t f = L->error_file();
    if (f != ws::kNoFile && L->file_expected_sha256(f)) {
      ws::sha256_to_hex(L->file_expected_sha256(f), hex);
      r->expected_sha256 = hex;
      if (L->file_actual_sha256(f)) {
        ws::sha256_to_hex(L->file_actual_sha256(f), hex);
        r->actual_sha256 = hex;
      }
    }
  };
  std::vector<std::string> keys;  // weight -> its name in the result (model_host.h)
  auto key = [&](uint32_t w) { return w < keys.size() ? keys[w] : str(L->weight(w).name); };
  for (size_t steps = 0;; ++steps) {
    if (steps > 50000000) {
      r->violation = "the load does not end";
      return true;
    }
    ws::ModelEvent e;
    {
      Armed a(o.count_allocations);
      e = L->next();
    }
    switch (e.type) {
      case ws::ModelEventType::NeedRead: {
        const std::string name = str(L->file_name(e.file));
        if (!content.count(e.file) && !missing.count(e.file)) {
          Bytes b;
          if (files(name, &b))
            content[e.file] = b;
          else
            missing[e.file] = true;
        }
        if (e.length == 0 || e.length > o.read_size) r->violation = "a request of " + std::to_string(e.length) + " bytes";
        if (!asked[e.file]) {
          asked[e.file] = true;
          if (o.on_first_read) {
            Armed a(o.count_allocations);
            o.on_first_read(*L, e.file);
          }
        }
        if (missing.count(e.file)) {
          Armed a(o.count_allocations);
          L->file_missing();
          break;
        }
        const Bytes& b = content[e.file];
        if (!o.seekable) {
          if (e.offset != position[e.file])
            r->violation = "sequential read of " + name + " at " + std::to_string(e.offset) + ", not at " +
                           std::to_string(position[e.file]);
        }
        if (o.declare_sizes) {
          Armed a(o.count_allocations);
          L->set_file_size(b.size());
        }
        if (e.offset >= b.size()) {
          Armed a(o.count_allocations);
          L->end_of_file();
          break;
        }
        size_t n = size_t(b.size() - e.offset < e.length ? b.size() - e.offset : e.length);
        if (o.feed == HostOptions::Feed::OneByte) n = 1;
        if (o.feed == HostOptions::Feed::Random) n = 1 + next_random(&seed) % n;
        position[e.file] = e.offset + n;
        r->bytes_fed[name] += n;
        r->fed_total += n;
        Armed a(o.count_allocations);
        L->feed(b.data() + e.offset, n);
        break;
      }
      case ws::ModelEventType::ModelReady: {
        r->ready = true;
        r->convention = L->convention();
        r->config_used = L->config_used();
        std::map<std::string, int> count;
        for (uint32_t i = 0; i < L->weight_count(); ++i) ++count[str(L->weight(i).name)];
        for (uint32_t i = 0; i < L->weight_count(); ++i) {
          const std::string name = str(L->weight(i).name);
          keys.push_back(count[name] > 1 ? name + "@" + str(L->file_name(L->weight_file(i))) : name);
          r->weight_names.push_back(keys.back());
          if (L->passes_stored(i)) r->passed_stored.push_back(keys.back());
        }
        r->read_at_ready = L->bytes_read();
        const ws::ModelPlan plan = L->plan(1 << 20);
        r->plan_sequential = plan.sequential_peak;
        r->plan_seekable = plan.seekable_peak;
        if (o.on_ready) o.on_ready(*L);
        Armed a(o.count_allocations);
        if (o.select_all) {
          L->select_all();
        } else {
          for (const std::string& want : o.select)
            for (uint32_t i = 0; i < L->weight_count(); ++i)
              if (str(L->weight(i).name) == want) L->select(i);
        }
        r->planned = L->bytes_to_read();
        break;
      }
      case ws::ModelEventType::WeightBegin: {
        const std::string name = key(e.weight);
        if (r->weights.count(name)) r->violation = "weight " + name + " begins twice";
        r->weights[name].name = name;
        r->order.push_back(name);
        break;
      }
      case ws::ModelEventType::WeightData: {
        LoadedWeight& w = r->weights[key(e.weight)];
        if (o.mode == ws::ModelLoadMode::Raw || L->stored_for_host(e.weight)) {
          Bytes& p = w.pieces[int(e.role)];
          if (e.offset != p.size()) r->violation = "raw piece out of order";
          p.insert(p.end(), e.data, e.data + e.size);
        } else if (e.offset != w.bytes.size()) {
          r->violation = "output of " + w.name + " at " + std::to_string(e.offset) + ", not at " + std::to_string(w.bytes.size());
        }
        w.bytes.insert(w.bytes.end(), e.data, e.data + e.size);
        break;
      }
      case ws::ModelEventType::WeightEnd:
        r->weights[key(e.weight)].ended = true;
        r->ends.push_back(key(e.weight));
        break;
      case ws::ModelEventType::Kv:
        break;
      case ws::ModelEventType::Warning: {
        const ws::Warning& w = L->warning();
        if (e.file != w.file || e.offset != w.offset || e.weight != w.weight) r->violation = "a Warning event that is not warning()";
        r->warnings.push_back(std::string(ws::warning_name(w.code)) + "@" + std::to_string(w.offset) +
                              " tensor=" + std::string(w.tensor_name ? w.tensor_name : "", w.tensor_name_size) +
                              " file=" + str(L->file_name(w.file)) + " weight=" + key(w.weight) +
                              " count=" + std::to_string(w.count));
        break;
      }
      case ws::ModelEventType::Done:
        r->read_at_end = L->bytes_read();
        digests_of();
#ifdef WS_COUNTING_ALLOCATOR
        r->allocations = wsalloc::g_allocs - allocs_before;
#endif
        return true;
      case ws::ModelEventType::Error: {
        const ws::Error& err = L->error();
        r->code = err.code;
        r->offset = err.offset;
        r->tensor = err.tensor_name ? std::string(err.tensor_name, err.tensor_name_size) : "";
        r->file = L->error_file() == ws::kNoFile ? "" : str(L->file_name(L->error_file()));
        r->detail = str(L->error_detail());
        r->has_found = err.has_found;
        r->has_expected = err.has_expected;
        r->found = err.found;
        r->expected = err.expected;
        r->tensor_index = err.tensor;
        r->convention_error = L->convention_error();
        r->error_convention = L->error_convention().id;
        r->read_at_end = L->bytes_read();
        digests_of();
#ifdef WS_COUNTING_ALLOCATOR
        r->allocations = wsalloc::g_allocs - allocs_before;
#endif
        *needed = err.code == ws::Status::ArenaExhausted ? L->arena_needed() : 0;
        return true;
      }
    }
  }
}

}  // namespace

LoadResult load_model(const Files& files, ws::ModelEntry entry, const std::string& entry_name, const HostOptions& o,
                      const std::vector<std::string>& listing) {
  return load_model_with(files, entry, entry_name, o, nullptr, listing);
}

LoadResult load_model_with(const Files& files, ws::ModelEntry entry, const std::string& entry_name, const HostOptions& o,
                           const std::function<void(ws::ModelLoader&)>& before_open, const std::vector<std::string>& listing) {
  LoadResult r;
  size_t arena = o.arena;
  uint64_t first = 0;
  for (int i = 1; i <= 12; ++i) {
    size_t needed = 0;
    attempt(files, entry, entry_name, o, listing, arena, &r, &needed, before_open);
    r.attempts = i;
    if (i == 1) first = r.read_at_end;
    if (r.code != ws::Status::ArenaExhausted || needed <= arena) break;
    arena = needed;
  }
  r.read_first_attempt = first;
  return r;
}

}  // namespace modeltest
