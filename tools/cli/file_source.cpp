// weightstream CLI — chunked file reading (see file_source.h).
#include "file_source.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

namespace wscli {
namespace {
constexpr size_t kBlockSize = 1 << 20;  // large reads; the chunk size only shapes what is fed
}

ChunkedFile::~ChunkedFile() {
  if (owns_fd_ && fd_ >= 0) close(fd_);
}

bool ChunkedFile::open(const std::string& path) {
  if (path == "-") {
    fd_ = 0;
    owns_fd_ = false;
  } else {
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) {
      error_ = strerror(errno);
      return false;
    }
    owns_fd_ = true;
  }
  struct stat st;
  if (fstat(fd_, &st) != 0) {
    error_ = strerror(errno);
    return false;
  }
  if (S_ISDIR(st.st_mode)) {
    error_ = strerror(EISDIR);
    return false;
  }
  size_known_ = S_ISREG(st.st_mode);
  if (size_known_) {
    // `weightstream validate - < file` gives a regular file on fd 0, possibly not at its start.
    const off_t at = lseek(fd_, 0, SEEK_CUR);
    start_ = at > 0 ? static_cast<uint64_t>(at) : 0;
    const uint64_t total = static_cast<uint64_t>(st.st_size);
    size_ = total > start_ ? total - start_ : 0;
  }
  block_.resize(kBlockSize);
  return true;
}

bool ChunkedFile::rewind() {
  if (!rewindable() || lseek(fd_, static_cast<off_t>(start_), SEEK_SET) < 0) {
    error_ = strerror(errno);
    return false;
  }
  block_fill_ = block_used_ = 0;
  eof_ = false;
  handed_ = 0;
  return true;
}

ChunkedFile::Result ChunkedFile::next(size_t chunk, const uint8_t** data, size_t* size) {
  *data = nullptr;
  *size = 0;
  if (block_used_ == block_fill_) {
    if (eof_) return Result::End;
    // Refilling overwrites the previous piece; the caller is done with it by contract.
    ssize_t n;
    do {
      n = read(fd_, block_.data(), block_.size());
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
      error_ = strerror(errno);
      return Result::Failed;
    }
    if (n == 0) {
      eof_ = true;
      return Result::End;
    }
    block_fill_ = static_cast<size_t>(n);
    block_used_ = 0;
  }
  size_t n = block_fill_ - block_used_;
  if (n > chunk) n = chunk;
  *data = block_.data() + block_used_;
  *size = n;
  block_used_ += n;
  handed_ += n;
  return Result::Piece;
}

LocalFile::~LocalFile() {
  if (fd_ >= 0) close(fd_);
}

ByteSource::Opened LocalFile::open(uint64_t, size_t) {
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  int err = errno;
  struct stat st;
  if (fd_ >= 0 && fstat(fd_, &st) == 0) {
    if (S_ISREG(st.st_mode)) {
      size_known_ = true;
      size_ = uint64_t(st.st_size);
    } else if (S_ISDIR(st.st_mode)) {
      close(fd_);
      fd_ = -1;
      err = EISDIR;
    }
  }
  if (fd_ >= 0) return Opened::Ok;
  error_ = strerror(err);
  return err == ENOENT ? Opened::Missing : Opened::Failed;
}

bool LocalFile::read(uint64_t offset, size_t length, const uint8_t** data, size_t* n) {
  if (offset < block_at_ || offset >= block_at_ + block_fill_) {
    // A small file gets a block of its size: a model of thousands of small shards would
    // otherwise zero a fresh 1 MiB for every file it opens (ws-bench-model --shards).
    const size_t want = size_known_ && size_ < kBlockSize ? size_t(size_ > 0 ? size_ : 1) : kBlockSize;
    if (block_.size() < want) block_.resize(want);
    const ssize_t got = pread(fd_, block_.data(), block_.size(), off_t(offset));
    if (got < 0) {
      error_ = strerror(errno);
      return false;
    }
    block_at_ = offset;
    block_fill_ = size_t(got);
  }
  const uint64_t avail = block_at_ + block_fill_ > offset ? block_at_ + block_fill_ - offset : 0;
  *n = size_t(avail < length ? avail : length);
  *data = block_.data() + (offset - block_at_);
  return true;
}

}  // namespace wscli
