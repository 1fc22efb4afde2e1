// The one translation unit that compiles stb_image (JPEG/PNG loading) and stb_image_write (PNG
// writing) from Debian's libstb-dev; every other file includes the headers for declarations only.
#define STB_IMAGE_IMPLEMENTATION
#define STBI_ONLY_JPEG  // the sample reads photographs; smaller and fewer code paths
#define STBI_ONLY_PNG
#include <stb/stb_image.h>

#define STB_IMAGE_WRITE_IMPLEMENTATION
#include <stb/stb_image_write.h>
