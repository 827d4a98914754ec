// weightstream CLI — local files: a file (or stdin) handed out in pieces of a chosen size
// (ChunkedFile), and a file read at any offset for the model host (LocalFile).
//
// The reader is fed `chunk` bytes at a time to exercise exactly the streaming a fetch() or an SD
// card gives it, but reading the disk 1 byte per syscall would be absurd: the file is read in large
// blocks and sliced. A piece stays valid until the next call to next(), which is what
// ws::Reader::feed() requires (the reader asks for more only after consuming the piece).
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <string>
#include <vector>

#include "byte_source.h"

namespace wscli {

class ChunkedFile {
 public:
  enum class Result { Piece, End, Failed };

  ChunkedFile() = default;
  ~ChunkedFile();
  ChunkedFile(const ChunkedFile&) = delete;
  ChunkedFile& operator=(const ChunkedFile&) = delete;

  // "-" reads standard input. On failure returns false and error() says why (strerror text).
  bool open(const std::string& path);

  // Size of a regular file (from where reading starts); unknown for pipes and terminals.
  bool size_known() const { return size_known_; }
  uint64_t size() const { return size_; }
  // Only regular files can be read a second time (the arena retry re-reads the input).
  bool rewindable() const { return size_known_; }
  bool rewind();

  // The next piece of at most `chunk` bytes (chunk >= 1).
  Result next(size_t chunk, const uint8_t** data, size_t* size);

  // Bytes handed out so far (the absolute offset of the next piece).
  uint64_t position() const { return handed_; }
  const std::string& error() const { return error_; }

 private:
  int fd_ = -1;
  bool owns_fd_ = false;
  bool size_known_ = false;
  uint64_t size_ = 0;
  uint64_t start_ = 0;  // where reading began: stdin may be a file already partly read
  std::vector<uint8_t> block_;
  size_t block_fill_ = 0;  // valid bytes in block_
  size_t block_used_ = 0;  // bytes of block_ already handed out
  bool eof_ = false;
  uint64_t handed_ = 0;
  std::string error_;
};

// A regular file read by offset, in large blocks that answers slice (the loader asks for up to
// its read size; the disk is read a block at a time, as ChunkedFile does).
class LocalFile : public ByteSource {
 public:
  explicit LocalFile(std::string path) : path_(std::move(path)) {}
  ~LocalFile() override;
  LocalFile(const LocalFile&) = delete;
  LocalFile& operator=(const LocalFile&) = delete;

  Opened open(uint64_t offset, size_t length) override;
  bool seekable() const override { return true; }
  bool read(uint64_t offset, size_t length, const uint8_t** data, size_t* n) override;

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<uint8_t> block_;  // the last block read
  uint64_t block_at_ = 0;
  size_t block_fill_ = 0;
};

}  // namespace wscli
