// ws::DataWarningScan, and the model loader's part that drives it (see data_warnings.h): which
// pieces a load scans, and the Warning events it hands out.
#include "data_warnings.h"

#include <string.h>

#include <new>

#include "../conventions/convention_descriptor.h"
#include "model_loader_internal.h"

namespace ws {

bool DataWarningScan::begin(const LogicalWeight& lw, uint32_t w, PieceRole role, uint32_t table, uint32_t index) {
  active_ = false;
  const ConventionDataWarning* dw = convention_descriptor(lw.convention).data_warning;
  uint32_t unit = 0;
  if (!dw || !dw->scans(lw, role, &unit) || unit == 0 || unit > sizeof carry_) return false;
  dw_ = dw;
  lw_ = &lw;
  w_ = w;
  table_ = table;
  index_ = index;
  unit_ = unit;
  carried_ = 0;
  first_ = count_ = 0;
  active_ = true;
  return true;
}

void DataWarningScan::unit(const uint8_t* p, uint64_t offset) {
  const uint32_t n = dw_->hits(*lw_, p);
  if (n && !count_) first_ = offset;
  count_ += n;
}

void DataWarningScan::feed(uint64_t offset, const uint8_t* data, size_t size) {
  if (!active_) return;
  while (size > 0) {
    if (carried_ || size < unit_) {  // a unit split across feeds
      if (!carried_) carry_at_ = offset;
      size_t take = unit_ - carried_;
      if (take > size) take = size;
      memcpy(carry_ + carried_, data, take);
      carried_ += uint32_t(take);
      data += take;
      offset += take;
      size -= take;
      if (carried_ == unit_) {
        unit(carry_, carry_at_);
        carried_ = 0;
      }
      continue;
    }
    const size_t whole = size / unit_ * unit_;
    for (size_t k = 0; k < whole; k += unit_) unit(data + k, offset + k);
    data += whole;
    offset += whole;
    size -= whole;
  }
}

bool DataWarningScan::end(Warning* out) {
  if (!active_) return false;
  active_ = false;
  if (!count_) return false;
  *out = Warning();
  out->code = dw_->code;
  out->offset = first_;
  out->weight = w_;
  out->count = count_;
  return true;
}

// --- The loader's part ------------------------------------------------------------------------

DataWarningScan& ModelLoader::warn_scan() {
  static_assert(sizeof(DataWarningScan) <= sizeof warn_storage_ && alignof(DataWarningScan) <= 8,
                "ModelLoader::warn_storage_ must hold a DataWarningScan");
  return *reinterpret_cast<DataWarningScan*>(warn_storage_);
}

// At ModelReady: whether this load scans anything (a mode that reads data, a convention that
// warns of some).
void ModelLoader::warn_prepare() {
  new (warn_storage_) DataWarningScan();
  warn_scans_ = opt_.mode != ModelLoadMode::Headers && model_ && !opt_.as_stored &&
                convention_descriptor(convention_).data_warning != nullptr;
}

bool ModelLoader::warn_begin(uint32_t w, PieceRole role, uint32_t table, uint32_t index) {
  if (!warn_scans_ || w == kNoTensor) return false;
  if (opt_.mode != ModelLoadMode::Validate && !selected(w)) return false;  // what the load reads for
  return warn_scan().begin(weight(w), w, role, table, index);
}

void ModelLoader::warn_feed(uint32_t table, uint32_t index, uint64_t offset, const uint8_t* data, size_t size) {
  if (warn_scans_ && warn_scan().on(table, index)) warn_scan().feed(offset, data, size);
}

bool ModelLoader::warn_end(uint32_t table, uint32_t index) {
  if (!warn_scans_ || !warn_scan().on(table, index)) return false;
  Warning w;
  if (!warn_scan().end(&w)) return false;
  w.file = table_file(table);
  const StrView name = tensor(TensorRef{table, index}).name;
  w.tensor_name = name.data;
  w.tensor_name_size = name.size;
  warning_ = w;
  return true;
}

// The stream's tensor events (route()): true when a scanned piece ended with instances (warning_
// is set; the caller hands it out).
bool ModelLoader::warn_stream(uint32_t t, const Event& e) {
  switch (e.type) {
    case EventType::TensorBegin: {
      PieceRole role;
      const uint32_t w = owner_of(t, e.tensor, &role);
      warn_begin(w, role, t, e.tensor);
      return false;
    }
    case EventType::TensorBytes:
      warn_feed(t, e.tensor, e.offset, e.data, e.size);
      return false;
    case EventType::TensorEnd: return warn_end(t, e.tensor);
    default: return false;
  }
}

ModelEvent ModelLoader::warning_event() {
  warn_pending_ = false;
  ModelEvent e;
  e.type = ModelEventType::Warning;
  e.file = warning_.file;
  e.offset = warning_.offset;
  e.weight = warning_.weight;
  return e;
}

}  // namespace ws
