#pragma once
#include "core/base.h"
inline int Render() { return Base() + 1; }
