// weightstream — umbrella header. See reader.h for the streaming pull API.
#pragma once

#include "weightstream/dtype.h"
#include "weightstream/limits.h"
#include "weightstream/reader.h"
#include "weightstream/shard_index.h"
#include "weightstream/status.h"
#include "weightstream/tensor_table.h"
