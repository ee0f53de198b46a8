// Deleting a directory tree without std::filesystem::remove_all.
//
// PyTorch's own libtorch builds (the wheels a CUDA build links against) export copies of the
// std::filesystem functions; the dynamic linker binds our calls to them, and their remove_all jumps to a
// null pointer (pytorch/pytorch#133437). Every tree deletion in swarmt goes through this nftw-based one.
#pragma once

#include <string>

namespace swarmt {

// Removes `path` (a file, a symlink, or a directory and everything under it; symlinks are not followed).
// Returns true when nothing is left at `path`, including when nothing was there; never throws.
bool remove_tree(const std::string& path) noexcept;

}  // namespace swarmt
