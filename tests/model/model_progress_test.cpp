// ws::ModelLoader's progress totals: bytes_read() counts every byte fed, and bytes_to_read() right
// after the selection is exactly what the rest of the load reads — bytes_read() at ModelReady plus
// it is bytes_read() at Done — in every mode, seekable and sequential, with and without digests,
// in every chunking, over every golden case and the split GGUF models.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "model_cases.h"
#include "model_host.h"
#include "sha256.h"

using modeltest::Bytes;
using modeltest::Case;
using modeltest::HostOptions;
using modeltest::LoadResult;
using modeltest::Opened;
using Feed = modeltest::HostOptions::Feed;

namespace {

const std::string kRoot = WS_SOURCE_DIR;

std::string str(ws::StrView v) { return std::string(v.data ? v.data : "", v.size); }

struct Model {
  std::string name;
  Opened o;
  bool small = false;  // a fixture of the conventions (also read a byte at a time)
};

std::vector<Model> models() {
  std::vector<Model> out;
  for (const Case& c : modeltest::cases())
    out.push_back({c.name, modeltest::open_case(c), c.name.rfind("conv/", 0) == 0 || c.name.rfind("samples/", 0) == 0});
  // Split GGUF: found from one split, and given as a list.
  Model from_one{"split-gguf/tiny", Opened(), true};
  from_one.o.files = modeltest::disk_files(kRoot + "/tests/data/split-gguf");
  from_one.o.name = "tiny-00002-of-00003.gguf";
  out.push_back(from_one);
  Model listed{"split-gguf/meta-first", Opened(), true};
  listed.o.files = from_one.o.files;
  listed.o.entry = ws::ModelEntry::GgufSplits;
  listed.o.listing = {"meta-first-00003-of-00004.gguf", "meta-first-00001-of-00004.gguf", "meta-first-00004-of-00004.gguf",
                      "meta-first-00002-of-00004.gguf"};
  out.push_back(listed);
  return out;
}

void with_true_digests(const modeltest::Files& files, HostOptions* h) {
  h->on_first_read = [files](ws::ModelLoader& L, uint32_t f) {
    Bytes b;
    if (!files(str(L.file_name(f)), &b)) return;
    uint8_t d[ws::kSha256Bytes];
    ws::sha256(b.data(), b.size(), d);
    L.set_file_sha256(d);
  };
}

const char* mode_name(ws::ModelLoadMode m) {
  switch (m) {
    case ws::ModelLoadMode::Headers: return "headers";
    case ws::ModelLoadMode::Validate: return "validate";
    case ws::ModelLoadMode::Decode: return "decode";
    case ws::ModelLoadMode::Raw: return "raw";
  }
  return "?";
}

// Checks one load's totals; returns whether it ended well (Done).
bool check_totals(const Model& m, const HostOptions& h, const LoadResult& r, const std::string& what) {
  EXPECT_EQ(r.violation, "") << what;
  EXPECT_EQ(r.read_at_end, r.fed_total) << what;  // every byte fed, nothing else
  if (!r.ready) return false;
  if (h.mode == ws::ModelLoadMode::Headers) {
    EXPECT_EQ(r.planned, 0u) << what;
  }
  if (r.code != ws::Status::Ok) {
    EXPECT_LE(r.read_at_end, r.read_at_ready + r.planned) << what;  // an error only stops early
    return false;
  }
  EXPECT_EQ(r.read_at_ready + r.planned, r.read_at_end) << what << ": ready " << r.read_at_ready << " + planned " << r.planned;
  if (!h.seekable && h.mode != ws::ModelLoadMode::Headers) {
    // Forward: every file the load opened was read once, whole (which says the plan by itself).
    for (const auto& f : r.bytes_fed) {
      Bytes b;
      EXPECT_TRUE(m.o.files(f.first, &b)) << what << " " << f.first;
      EXPECT_EQ(f.second, b.size()) << what << " " << f.first;
    }
  }
  return true;
}

TEST(ModelProgress, ReadyPlusPlannedIsDoneEveryModeAndSource) {
  size_t done = 0, with_data = 0;
  uint32_t seed = 1;
  for (const Model& m : models()) {
    const bool uqff = m.o.entry == ws::ModelEntry::UqffFiles;
    for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Headers, ws::ModelLoadMode::Validate, ws::ModelLoadMode::Decode,
                                   ws::ModelLoadMode::Raw}) {
      for (bool seekable : {true, false}) {
        // A sequential UQFF model is read whole before ModelReady: only Headers and Validate.
        if (!seekable && uqff && (mode == ws::ModelLoadMode::Decode || mode == ws::ModelLoadMode::Raw)) continue;
        for (bool digests : {false, true}) {
          for (Feed feed : {Feed::Random, Feed::OneByte}) {
            if (feed == Feed::OneByte && !m.small) continue;
            HostOptions h;
            h.mode = mode;
            h.seekable = seekable;
            h.feed = feed;
            h.read_size = feed == Feed::OneByte ? 5 : 333;
            h.seed = seed++;
            if (digests) with_true_digests(m.o.files, &h);
            const std::string what = m.name + " " + mode_name(mode) + (seekable ? " seekable" : " sequential") +
                                     (digests ? " digests" : "") + (feed == Feed::OneByte ? " one-byte" : "");
            const LoadResult r = modeltest::load_model(m.o.files, m.o.entry, m.o.name, h, m.o.listing);
            if (check_totals(m, h, r, what)) {
              ++done;
              if (r.planned > 0) ++with_data;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(done, 1250u);  // (most corpus files are invalid: their errors only stop early)
  EXPECT_GT(with_data, 750u);
}

// pass_stored and as_stored read what they plan too (all four modes; Decode with pass_stored).
TEST(ModelProgress, StoredOptionsReadWhatTheyPlan) {
  size_t done = 0;
  for (const Model& m : models()) {
    if (!m.small) continue;
    for (ws::ModelLoadMode mode : {ws::ModelLoadMode::Headers, ws::ModelLoadMode::Validate, ws::ModelLoadMode::Decode,
                                   ws::ModelLoadMode::Raw}) {
      for (bool seekable : {true, false}) {
        for (bool digests : {false, true}) {
          HostOptions h;
          h.mode = mode;
          h.seekable = seekable;
          h.feed = Feed::Random;
          h.read_size = 77;
          h.as_stored = true;
          h.pass_stored = true;
          if (digests) with_true_digests(m.o.files, &h);
          const LoadResult r = modeltest::load_model(m.o.files, m.o.entry, m.o.name, h, m.o.listing);
          const std::string what = m.name + " as stored " + mode_name(mode) + (seekable ? " seekable" : " sequential") +
                                   (digests ? " digests" : "");
          EXPECT_EQ(r.verdict(), "Ok") << what;
          if (check_totals(m, h, r, what)) ++done;
        }
      }
    }
  }
  EXPECT_GE(done, 8u * 16u);
}

// By range, the plan is the selection's pieces: an MLX model's every tensor is a piece of one
// weight, so Raw of all of them reads each tensor once — the data sections, whole. One weight
// reads its three pieces.
TEST(ModelProgress, ByRangeThePlanIsTheSelectedPieces) {
  for (const std::string dir : {"mlx", "sharded-mlx"}) {
    const modeltest::Files files = modeltest::disk_files(kRoot + "/tests/data/conventions/" + dir);
    const std::string entry = dir == "mlx" ? "model.safetensors" : "model.safetensors.index.json";
    uint64_t data = 0;  // every table's tensors' bytes
    HostOptions h;
    h.mode = ws::ModelLoadMode::Raw;
    h.on_ready = [&](const ws::ModelLoader& L) {
      data = 0;
      for (uint32_t t = 0; t < L.table_count(); ++t)
        for (uint32_t i = 0; i < L.table(t).count(); ++i) data += L.table(t).get(i).byte_size();
    };
    const ws::ModelEntry kind = dir == "mlx" ? ws::ModelEntry::File : ws::ModelEntry::ShardIndex;
    LoadResult r = modeltest::load_model(files, kind, entry, h);
    ASSERT_EQ(r.verdict(), "Ok") << dir;
    EXPECT_EQ(r.planned, data) << dir;
    EXPECT_EQ(r.read_at_end - r.read_at_ready, data) << dir;
    // The data sections are the files past their headers: the same total, from the files.
    uint64_t sections = 0;
    for (const auto& f : r.bytes_fed) {
      if (f.first == "config.json" || f.first == "model.safetensors.index.json") continue;
      Bytes b;
      ASSERT_TRUE(files(f.first, &b));
      uint64_t n = 0;
      for (int i = 7; i >= 0; --i) n = (n << 8) | b[size_t(i)];
      sections += b.size() - 8 - n;
    }
    EXPECT_EQ(data, sections) << dir;
    // One weight (the last quantized one): its packed words, scales and biases.
    std::string one;
    uint64_t pieces = 0;
    HostOptions headers;
    headers.mode = ws::ModelLoadMode::Headers;
    headers.on_ready = [&](const ws::ModelLoader& L) {
      for (uint32_t w = 0; w < L.weight_count(); ++w) {
        if (!L.weight(w).ref(ws::PieceRole::Biases).present()) continue;
        one = str(L.weight(w).name);
        pieces = 0;
        for (ws::PieceRole role : {ws::PieceRole::Packed, ws::PieceRole::Scales, ws::PieceRole::Biases})
          pieces += L.tensor(L.weight(w).ref(role)).byte_size();
      }
    };
    ASSERT_EQ(modeltest::load_model(files, kind, entry, headers).verdict(), "Ok");
    ASSERT_NE(one, "") << dir;
    h.select_all = false;
    h.select = {one};
    h.on_ready = nullptr;
    r = modeltest::load_model(files, kind, entry, h);
    ASSERT_EQ(r.verdict(), "Ok") << dir;
    ASSERT_EQ(r.order, std::vector<std::string>{h.select[0]}) << dir;
    EXPECT_GT(pieces, 0u);
    EXPECT_EQ(r.planned, pieces) << dir;
    EXPECT_EQ(r.read_at_end - r.read_at_ready, pieces) << dir;
  }
}

// Without the files' sizes the forward stream reads each file to the end its header implies:
// safetensors exactly; GGUF up to its data's end rounded to the alignment, which ggml's writer
// pads to — a valid file that ends earlier (its last padding absent) reads up to alignment - 1
// bytes less than planned.
TEST(ModelProgress, SizesNotGivenThePlanIsTheHeadersEnd) {
  size_t exact = 0, short_gguf = 0;
  for (const Model& m : models()) {
    for (bool seekable : {true, false}) {
      uint32_t alignment = 0;
      HostOptions h;
      h.mode = ws::ModelLoadMode::Validate;
      h.seekable = seekable;
      h.declare_sizes = false;
      h.feed = Feed::Random;
      h.read_size = 100;
      h.on_ready = [&](const ws::ModelLoader& L) {
        for (uint32_t t = 0; t < L.table_count(); ++t) {
          const ws::Reader* rd = L.file_reader(L.table_file(t));
          if (rd->format() == ws::Format::Gguf && rd->gguf_alignment() > alignment) alignment = rd->gguf_alignment();
        }
      };
      const LoadResult r = modeltest::load_model(m.o.files, m.o.entry, m.o.name, h, m.o.listing);
      const std::string what = m.name + (seekable ? " seekable" : " sequential");
      EXPECT_EQ(r.read_at_end, r.fed_total) << what;
      if (r.code != ws::Status::Ok || !r.ready) continue;
      const uint64_t planned_end = r.read_at_ready + r.planned;
      if (alignment == 0 || planned_end == r.read_at_end) {
        EXPECT_EQ(planned_end, r.read_at_end) << what;
        ++exact;
      } else {
        EXPECT_GT(planned_end, r.read_at_end) << what;
        EXPECT_LT(planned_end - r.read_at_end, alignment) << what;
        ++short_gguf;
      }
    }
  }
  EXPECT_GT(exact, 100u);
  printf("sizes not given: %zu loads as planned, %zu GGUF loads short of their padded end\n", exact, short_gguf);
}

}  // namespace
