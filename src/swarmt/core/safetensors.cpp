// Reading safetensors files through mmap (see safetensors.h). Header validation is in
// safetensors_header.cpp, writing in safetensors_writer.cpp.
#include "swarmt/core/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "swarmt/core/error.h"

namespace swarmt {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "safetensors data is little-endian; swarmt reads it in place and assumes a little-endian host");

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  SWARMT_CHECK_INPUT(fd >= 0, path, ": cannot open (", std::strerror(errno), ")");
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw_input_error(path, ": not a regular file");
  }
  std::shared_ptr<MappedFile> file(new MappedFile());
  file->path_ = path;
  file->size_ = static_cast<size_t>(st.st_size);
  if (file->size_ > 0) {
    // Private and writable: pages are copy-on-write, so the file itself can never change through us,
    // and an accidental in-place write to a zero-copy tensor does not fault.
    void* p = ::mmap(nullptr, file->size_, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    int saved = errno;
    ::close(fd);
    SWARMT_CHECK_INPUT(p != MAP_FAILED, path, ": cannot map into memory (", std::strerror(saved), ")");
    file->data_ = static_cast<uint8_t*>(p);
  } else {
    ::close(fd);
  }
  return file;
}

void MappedFile::release_pages(const uint8_t* begin, size_t bytes) const {
  if (data_ == nullptr || bytes == 0) return;
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t lo = reinterpret_cast<uintptr_t>(data_), hi = lo + size_;
  const uintptr_t first = std::max(lo, reinterpret_cast<uintptr_t>(begin) / page * page);
  const uintptr_t last = std::min(hi, (reinterpret_cast<uintptr_t>(begin) + bytes + page - 1) / page * page);
  // The mapping starts on a page boundary, so `first` is one too; advice is best-effort (a failure only
  // means the pages stay resident).
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);
}

MappedFile::~MappedFile() {
  if (data_) ::munmap(data_, size_);
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile file;
  file.mapping_ = MappedFile::open(path);
  file.header_ = std::make_shared<const SafetensorsHeader>(
      parse_safetensors_header(file.mapping_->data(), file.mapping_->size(), path));
  return file;
}

const TensorEntry& SafetensorsFile::entry(const std::string& name) const {
  const TensorEntry* e = header_->find(name);
  SWARMT_CHECK_INPUT(e != nullptr, path(), ": no tensor named '", name, "'");
  return *e;
}

const uint8_t* SafetensorsFile::data(const TensorEntry& entry) const {
  SWARMT_CHECK(entry.end <= header_->data_bytes, "entry does not belong to this file");
  return mapping_->data() + header_->data_start + entry.begin;
}

bool SafetensorsFile::is_aligned(const TensorEntry& entry) const {
  return reinterpret_cast<uintptr_t>(data(entry)) % dtype_size(entry.dtype) == 0;
}

}  // namespace swarmt
