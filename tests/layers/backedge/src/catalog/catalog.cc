#include "core/base.h"
#include "io/render.h"  // the back-edge: catalog is below io
int Catalog() { return Render(); }
