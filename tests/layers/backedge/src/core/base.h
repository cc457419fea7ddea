#pragma once
inline int Base() { return 1; }
